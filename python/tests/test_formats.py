"""The files and their documentation agree, read from outside C++: every field that
docs/run-format.md, docs/analysis-format.md (and the aggregate table of docs/sweep-format.md)
names is in the files LenGen just wrote and is read by the package; files of the older
layouts still open; and a damaged global heap is refused, not a crash."""

import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import lengen
import lengen._h5 as h5
from conftest import ROOT
from readall import read_run, read_sweep

DOCS = os.path.join(ROOT, "docs")


# -- the docs' tables --------------------------------------------------------------------

def table_rows(text, first_header):
    """(path cell, every other cell joined) of each row of the tables whose first header cell
    is `first_header`. Cells split at '|' outside code spans and not escaped."""
    rows, inside = [], False
    for line in text.splitlines():
        if not line.startswith("|"):
            inside = False
            continue
        cells = split_cells(line)
        if not inside:
            inside = cells and cells[0].strip().lower() == first_header
            continue
        if set(line) <= set("|-: "):
            continue
        rows.append((cells[0].strip(), " ".join(c.strip() for c in cells[1:])))
    return rows


def split_cells(line):
    cells, cur, code = [], "", False
    i = 1
    while i < len(line):
        c = line[i]
        if c == "`":
            code = not code
        if c == "\\" and line[i + 1:i + 2] == "|":
            cur += "|"
            i += 2
            continue
        if c == "|" and not code:
            cells.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    return cells


def without_parentheses(text):
    """The text with every parenthesised aside removed (nested ones too) and every `= value`
    dropped: what is left names fields, not their values or comments."""
    out, depth, code = [], 0, False
    for c in text:
        if c == "`":
            code = not code
        if not code and c == "(":
            depth += 1
        elif not code and c == ")" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    text = "".join(out)
    return re.sub(r"=\s*(`[^`]*`|[0-9]+)", "", text)


IDENT = re.compile(r"`([a-z][a-z0-9_]*)`")


def expand(path):
    """`/a/{b, c}/<x>` -> ['/a/b/<x>', '/a/c/<x>'] (every alternative is a field of its own)."""
    m = re.search(r"\{([^}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand(path[:m.start()] + alt.strip() + path[m.end():])
    return out


def pattern(path):
    """A doc path as a regex over object paths: <placeholder> is one path segment (<probe
    path> may be several)."""
    parts = re.split(r"(<[^>]+>)", path.rstrip("/") or "/")
    return "".join((".+" if " path" in p else "[^/]+") if p.startswith("<") else re.escape(p)
                   for p in parts)


class Field:
    """One documented field: an object (attr None) or an attribute, in a file; `alts` are the
    object paths that may hold it (a row starting with "…" continues the row before: its
    object, or that object's parent)."""

    def __init__(self, file, alts, attr=None, doc=""):
        self.file, self.alts, self.attr, self.doc = file, list(alts), attr, doc

    def __repr__(self):
        return "%s:%s%s" % (self.file, " or ".join(self.alts), "@" + self.attr if self.attr
                            else "")


def documented_fields():
    """Every documented field of the three docs' layout tables (and the maps file)."""
    fields = []

    def layout(doc, header, file, probe_rows=False):
        text = open(os.path.join(DOCS, doc)).read()
        last_explicit = None
        attrs_of = {}
        for path_cell, contents in table_rows(text, header):
            paths = re.findall(r"`([/…][^`]*)`", path_cell)
            if probe_rows and not paths:
                fields.extend(probe_fields(path_cell, contents, file, doc))
                continue
            if not paths or "reserved" in contents:
                continue  # reserved groups: kept for later additions, nothing in them to read
            objects = []  # [[alternative paths]]
            open_ended = False
            for p in paths:
                open_ended = open_ended or p.endswith("/…")
                p = re.sub(r"/…$", "", p)  # "…" at the end: whatever the group holds
                if p.startswith("…"):
                    for b in expand(last_explicit):
                        for r in expand(p[1:]):
                            objects.append([b + r, b.rsplit("/", 1)[0] + r])
                else:
                    last_explicit = p.rstrip("/")
                    objects += [[e] for e in expand(p)]
            stripped = without_parentheses(contents)
            if re.search(r"\battributes\b", path_cell):
                names = IDENT.findall(stripped)
                for alts in objects:
                    attrs_of[paths[0]] = names
                    fields.extend(Field(file, alts, n, doc) for n in names)
                continue
            word = re.search(r"\b[Aa]ttributes?\b", stripped)
            before = stripped[:word.start()] if word else stripped
            after = stripped[word.end():] if word else ""
            names = IDENT.findall(after)
            for inherited in re.findall(r"`(/[^`]*)`", after):
                names += attrs_of.get(inherited, [])
            instances = re.findall(r"`([a-z][a-z0-9_]*(?:=<[a-z]+>)?)`", before)
            for alts in objects:
                p = alts[0]
                targets, children = [alts], []
                if p.endswith("/") and instances:
                    # a group's row that lists its datasets (aggregate.h5's curves)
                    children = [[p + i] for i in instances]
                elif p.endswith(">") and instances and len(alts) == 1 and not open_ended:
                    # /log/<column>, /probes/attention/<setting>: the row lists them
                    targets = [[p.rsplit("/", 1)[0] + "/" + i] for i in instances]
                for t in targets:
                    fields.append(Field(file, t, None, doc))
                    fields.extend(Field(file, t, n, doc) for n in names)
                fields.extend(Field(file, c, None, doc) for c in children)
        return text

    layout("run-format.md", "path", "run.h5")
    text = layout("analysis-format.md", "path", "analysis.h5", probe_rows=True)
    maps = re.search(r"`(/<setting>/maps)`", text)
    assert maps, "analysis-format.md no longer names /<setting>/maps"
    fields.append(Field("attention_maps.h5", [maps.group(1)], None, "analysis-format.md"))
    layout("sweep-format.md", "object", "aggregate.h5")
    return fields


def probe_fields(label, contents, file, doc):
    """The two rows that name probe objects in words: "probe group attributes" are the
    attributes of each probe (/probes/duplicated/<probe> and /probes/serial_position),
    "probe curve groups" the curves in them (datasets and <mark>_span attributes)."""
    groups = ["/probes/duplicated/<probe>", "/probes/serial_position"]
    stripped = without_parentheses(contents)
    if label == "probe group attributes":
        return [Field(file, [g], n, doc) for g in groups for n in IDENT.findall(stripped)]
    if label == "probe curve groups":
        head, _, marks = stripped.partition(" for ")
        curves = [g + "/<curve>" for g in groups]
        out = [Field(file, [c + "/" + d], None, doc) for c in curves for d in IDENT.findall(head)]
        # each mark in some probe's curves (the answer block is the serial position's)
        return out + [Field(file, curves, m + "_span", doc) for m in IDENT.findall(marks)]
    raise AssertionError("analysis-format.md: a row '%s' this test does not know" % label)


def satisfied(field, reads):
    """Whether the package read the field: the object (for a group, something in it), or the
    attribute on the object or on one of the leading objects of its path."""
    files = re.compile(re.escape(field.file).replace(r"\.h5", r"(\.[^/]+)?\.h5"))
    for alt in field.alts:
        under = re.compile("^" + pattern(alt) + "(/.*)?$")
        for file, obj, attr in reads:
            if not files.fullmatch(file):
                continue
            if field.attr is None and attr is None and under.match(obj):
                return True
            if field.attr is not None and attr == field.attr and on_path(alt, obj):
                return True
    return False


def on_path(doc_path, obj):
    """Whether `obj` is the object of `doc_path` or of one of its leading segments (a curve's
    `label` is documented with its datasets' row)."""
    segs = doc_path.rstrip("/").split("/")
    if len(segs) == 1:
        return obj == "/"
    return any(re.fullmatch(pattern("/".join(segs[:n])), obj) for n in range(len(segs), 1, -1))


def test_every_documented_field_is_in_the_files_and_read(fixture_runs, fixture_sweep):
    fields = documented_fields()
    assert len(fields) > 120, "the docs' tables were not parsed (%d fields)" % len(fields)
    h5.READS = set()
    try:
        for which in ("run", "imported"):
            read_run(fixture_runs[which])
        sweep = read_sweep(fixture_sweep)
        for name, run in sweep.runs().items():
            read_run(run.path)
        reads = h5.READS
    finally:
        h5.READS = None
    missing = [f for f in fields if not satisfied(f, reads)]
    assert not missing, "named in the docs but not in the files (or not read):\n  " + \
        "\n  ".join("%s (%s)" % (f, f.doc) for f in missing)


def test_the_doc_parser_finds_what_it_must(fixture_runs):
    names = {repr(f) for f in documented_fields()}
    for want in ("run.h5:/@precision", "run.h5:/log/grad_norm", "run.h5:/curriculum_reached",
                 "run.h5:/checkpoint/slot1/step/model/<key> or /checkpoint/slot1/model/<key>",
                 "analysis.h5:/eval/<method>@trained_points",
                 "analysis.h5:/eval/<method>/<model>/bootstrap_high@label",
                 "analysis.h5:/interventions/<spec>/<method>@parameters",
                 "analysis.h5:/interventions/<spec>/<method>@zero_estimator",
                 "analysis.h5:/imported/<label>/<method>/<model>@trained_points",
                 "analysis.h5:/probes/attention/points=<n>@maps_file",
                 "analysis.h5:/probes/serial_position/begin@answer_distance",
                 "analysis.h5:/probes/duplicated/<probe>/<curve> or /probes/serial_position/<curve>"
                 "@prefix_span",
                 "attention_maps.h5:/<setting>/maps",
                 "aggregate.h5:/eval/<method>/<group>/<curve>/seeds"):
        assert want in names, want


# -- older layouts -------------------------------------------------------------------------

def make_older(src_folder, dst_folder):
    """A copy of a run as LenGen wrote it before November 2026: strings variable-length,
    no precision, no grad_norm, no curriculum_reached, no trained_points in its results."""
    shutil.copytree(src_folder, dst_folder)

    def vlen(obj):
        for name in list(obj.attrs):
            v = obj.attrs[name]
            if isinstance(v, (bytes, np.bytes_)):
                del obj.attrs[name]
                obj.attrs[name] = bytes(v).decode()  # h5py writes str variable-length

    with h5py.File(os.path.join(dst_folder, "run.h5"), "r+") as f:
        vlen(f)
        for k in ("precision",):
            if k in f.attrs:
                del f.attrs[k]
        config = bytes(f["config"][()]).decode()
        del f["config"]
        f["config"] = config
        del f["log/grad_norm"]
        del f["curriculum_reached"]
    with h5py.File(os.path.join(dst_folder, "analysis.h5"), "r+") as f:
        vlen(f)

        def visit(name, obj):
            vlen(obj)
            if "trained_points" in obj.attrs:
                del obj.attrs["trained_points"]

        f.visititems(visit)
    return os.path.join(dst_folder, "run.h5")


def test_older_files_still_open(fixture_runs, work):
    from test_against_cli import eval_show, test_info_matches_lengen_info

    new = lengen.open_run(fixture_runs["run"])
    old_path = make_older(new.folder, os.path.join(work, "older", "run"))
    old = lengen.open_run(old_path)
    with h5py.File(old_path, "r") as f:  # really the old layout
        assert h5py.check_string_dtype(f["config"].dtype).length is None
        assert "grad_norm" not in f["log"] and "curriculum_reached" not in f
    a, b = new.info, old.info
    for k in a:
        if k != "position_constants":
            assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), k
    assert b["precision"] == "fp32" and old.config == new.config
    assert old.log["grad_norm"].isna().all()
    # Without the record: the log's last row (step 4), or the config at the checkpoint's
    # step where the checkpoint (6) is later, as LenGen's reader does.
    assert old.curriculum["source"] == "config"
    assert old.curriculum["points"] == new.curriculum["points"]
    e_old, e_new = old.evaluations(), new.evaluations()
    assert list(e_old["trained_points"]) == list(e_new["trained_points"])
    # ... and the CLI reads the copy as the package does.
    test_info_matches_lengen_info({"run": old_path}, "run")
    assert eval_show(old_path).keys() == eval_show(new.path).keys()


def in_child(code, timeout=20):
    """Runs `code` in a fresh interpreter (a crash there is the test's to see, not fatal)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, cwd=os.path.dirname(__file__),
                          env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))


def test_damaged_global_heap_is_refused(fixture_runs, work):
    """A variable-length string in a damaged global heap crashes HDF5 1.10 inside h5py (the
    fuzzers' regression file does): the package walks the heaps first and refuses the file."""
    regression = os.path.join(ROOT, "tests", "fuzz", "regressions", "run_file",
                              "global-heap-object-size.h5")
    old = make_older(os.path.dirname(fixture_runs["run"]), os.path.join(work, "heap", "run"))
    data = bytearray(open(old, "rb").read())
    at = data.find(b"GCOL\x01")
    assert at >= 0
    data[at + 16 + 8:at + 16 + 16] = (1 << 40).to_bytes(8, "little")  # first object's size
    with open(old, "wb") as f:
        f.write(data)
    for path in (regression, old):
        proc = in_child("import lengen, readall\n"
                        "try:\n    readall.read_run(%r)\n"
                        "except lengen.RunFileError as e:\n    print('refused:', e)\n" % path)
        assert proc.returncode == 0, (path, proc.returncode, proc.stderr[-500:])
        assert "refused: " + path in proc.stdout and "global heap" in proc.stdout, proc.stdout


def test_foreign_newer_and_missing(work, fixture_runs):
    foreign = os.path.join(work, "foreign.h5")
    with h5py.File(foreign, "w") as f:
        f["x"] = 1
    with pytest.raises(lengen.RunFileError, match="foreign") as e:
        lengen.open_run(foreign)
    assert e.value.path == foreign
    newer = os.path.join(work, "newer", "run.h5")
    os.makedirs(os.path.dirname(newer))
    shutil.copy(fixture_runs["run"], newer)
    with h5py.File(newer, "r+") as f:
        f.attrs["format_version"] = np.int64(99)
    with pytest.raises(lengen.RunFileError, match="newer"):
        lengen.open_run(newer)
    with pytest.raises(lengen.RunFileError, match="not found"):
        lengen.open_run(os.path.join(work, "nothing-here"))
    text = os.path.join(work, "text", "run.h5")
    os.makedirs(os.path.dirname(text))
    open(text, "w").write("model:\n")
    with pytest.raises(lengen.RunFileError, match="not an HDF5 file"):
        lengen.open_run(text)

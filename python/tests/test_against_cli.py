"""Every value the package reads is what the CLI prints of the same files: `lengen info`,
`lengen eval --show`, `lengen probe --show` and `lengen runs --format json`."""

import json
import math
import os
import re

import numpy as np
import pytest

import lengen
from conftest import EVAL_INTERVENTION, PROBE_INTERVENTION, cli


def info_text(run):
    """`lengen info RUN` as {field: text} (its first column is the field's name)."""
    out, _ = cli("info", run)
    fields, last = {}, None
    for line in out.splitlines():
        name, rest = line[:13].strip(), line[13:]
        if line.startswith("PE ") and line[12:13] != " ":
            name, rest = line.strip(), ""  # a longer name: its values on the next line
        if name:
            fields[name] = rest
            last = name
        elif last:
            fields[last] += ("\n" if fields[last] else "") + rest
    return fields


def same(cli_value, value):
    """A CLI number (None: the run has none) and the package's (NaN: none)."""
    if cli_value is None:
        return value is None or (isinstance(value, float) and math.isnan(value))
    return value == pytest.approx(cli_value, rel=1e-12)


def g(v, digits):
    """C's %.<digits>g."""
    return "%.*g" % (digits, v)


@pytest.mark.parametrize("which", ["run", "imported"])
def test_info_matches_lengen_info(fixture_runs, which):
    path = fixture_runs[which]
    run = lengen.open_run(path)
    i = run.info
    t = info_text(path)
    assert t["run file"] == path
    assert t["run id"] == "%s (created %s, lengen %s, format %d)" % (
        i["id"], i["created"], i["engine_version"], i["format_version"])
    assert t["status"].split("\n")[0] == "%s, checkpoint after %d of %d steps" % (
        i["status"], max(i["checkpoint_step"], 0), i["total_steps"])
    if run.tags:
        assert t["tags"] == ", ".join(run.tags)
    else:
        assert "tags" not in t
    if run.notes:
        assert t["notes"] == "\n".join(l for l in run.notes.split("\n"))
    if i["imported_from"]:
        assert t["imported"] == "from %s (trained by the reference's Python code)" % (
            i["imported_from"])
        assert i["seed"] is None and i["status"] == "imported"
    c = run.config
    cur = c["task"]["curriculum"]
    assert t["task"].startswith("%s (%s), D = %d, points %d..%d, dims %d..%d" % (
        i["task"], c["task"]["data"], cur["dims"]["end"], cur["points"]["start"],
        cur["points"]["end"], cur["dims"]["start"], cur["dims"]["end"]))
    assert t["trained on"].startswith("%d points, %d dims" % (i["trained_points"],
                                                               i["trained_dims"]))
    m = c["model"]
    assert t["model"] == "%s + %s, hidden %d, layers %d, heads %d, %.3f M parameters" % (
        i["backbone"], i["pe"], m["hidden_size"], m["num_hidden_layers"],
        m["num_attention_heads"], i["parameter_count"] / 1e6)
    seed = "unknown" if i["seed"] is None else str(i["seed"])
    assert t["training"].startswith("lr %s, batch %d, seed %s, device %s (%s)" % (
        g(c["training"]["learning_rate"], 6), c["training"]["per_device_train_batch_size"],
        seed, i["device"], i["precision"]))
    if i["log_rows"]:
        assert t["log"] == "%d rows, last loss %s" % (i["log_rows"], g(i["last_loss"], 5))
    else:
        assert t["log"] == "empty" and math.isnan(i["last_loss"])
    for name, values in i["position_constants"].items():
        shown = " ".join(g(v, 6) for v in values[:16])
        assert t["PE " + name].startswith(shown), name


def test_pointwise_matches_lengen_info(fixture_runs):
    """`lengen info --pointwise N`: the mean over the last N rows at the length reached."""
    path = fixture_runs["run"]
    out, _ = cli("info", path, "--pointwise", "2")
    run = lengen.open_run(path)
    pw = run.pointwise
    width = run.info["trained_points"]
    rows = pw.iloc[-2:, :width]
    shown = re.findall(r"k=(\d+)\s+([-0-9.naif]+)", out)
    assert len(shown) == width
    for k, text in shown:
        assert "%.4f" % rows[int(k)].mean() == text


def eval_show(run):
    """`lengen eval RUN --show` as {(method, intervention or None, source): {label: [values]},
    with the header numbers and the positions shown."""
    out, _ = cli("eval", run, "--show")
    blocks, current = {}, None
    for line in out.splitlines():
        head = re.match(r"^(\S.*?)  \[(.*?); (\d+) prompts, (\d+) points, train length (\d+), "
                        r"checkpoint step (\d+)\]$", line)
        if head:
            title, source = head.group(1), head.group(2)
            method, _, spec = title.partition(" + ")
            current = {"prompts": int(head.group(3)), "n_points": int(head.group(4)),
                       "train_points": int(head.group(5)),
                       "checkpoint_step": int(head.group(6)), "curves": {}}
            blocks[(method, spec or None, source)] = current
        elif line.startswith("  k ="):
            current["k"] = [int(v) for v in line.split()[2:]]
        elif line.startswith("  (") and "k" not in current:
            current["parameters"] = line.strip()[1:-1]
        elif line.startswith("  ") and current is not None:
            parts = line[2:].rsplit(None, len(current["k"]))  # a label may hold spaces
            current["curves"][parts[0].rstrip()] = parts[1:]
    return blocks


def test_evaluations_match_eval_show(fixture_runs):
    path = fixture_runs["run"]
    run = lengen.open_run(path)
    shown = eval_show(path)
    table = run.evaluations()
    assert len(table) == len(shown) == 4  # standard, ood_length, imported standard, yarn
    seen = set()
    for _, e in table.iterrows():
        key = (e["method"], e["intervention"], e["source"])
        assert key in shown, (key, list(shown))
        seen.add(key)
        block = shown[key]
        for k in ("prompts", "n_points", "train_points", "checkpoint_step"):
            assert e[k] == block[k], k
        if e["intervention"]:
            assert e["parameters"] == block["parameters"]
        curve = run.curve(e["method"], e["intervention"], e["imported"])
        labels = list(dict.fromkeys(curve["label"]))
        assert labels == list(block["curves"])
        for label, values in block["curves"].items():
            means = curve[curve["label"] == label].set_index("k")["mean"]
            assert ["%.4f" % means[k] for k in block["k"]] == values, label
    assert seen == set(shown)
    assert set(table["intervention"].dropna()) == {EVAL_INTERVENTION}
    assert set(table["imported"].dropna()) == {"python"}


def test_curve_has_band_and_baselines(fixture_runs):
    run = lengen.open_run(fixture_runs["run"])
    c = run.curve("ood_length")
    assert c.attrs["n_points"] == 14 and c.attrs["classification"] is False
    models = list(dict.fromkeys(c["model"]))
    assert models[0] == "RoPE" and c[c.model == "RoPE"]["transformer"].all()
    assert "OLS_driver=None" in models  # least squares, among the baselines
    assert (c["bootstrap_low"] <= c["mean"] + 1e-12).all()
    assert (c["mean"] <= c["bootstrap_high"] + 1e-12).all()
    assert c.groupby("model").size().eq(14).all()


def test_results_match_runs_json(fixture_runs):
    """The numbers `lengen runs --format json` tabulates, from the package's own reading."""
    out, _ = cli("runs", fixture_runs["folder"], "--format", "json")
    table = json.loads(out)
    listed, _ = cli("runs", fixture_runs["folder"], "--json")
    paths = [json.loads(l)["path"] for l in listed.splitlines()]
    assert len(paths) == len(table) == 2
    for path, row in zip(paths, table):
        run = lengen.open_run(path)
        i = run.info
        assert row["run"] == i["id"]
        assert row["status"] == i["status"]
        assert row["steps"] == i["steps"]
        assert same(row["final_loss"], i["last_loss"]), "final_loss"
        assert same(row["min_loss"], i["min_loss"]), "min_loss"
        assert same(row["steps_per_s"], i["steps_per_s"]), "steps_per_s"
        assert same(row["wall_s"], i["wall_s"]), "wall_s"
        evals = run.evaluations()
        results = [k for k in row if k.endswith("@train") or k.endswith("@longest")]
        for _, e in evals[evals["imported"].isna()].iterrows():
            assert same(row[e["name"] + "@train"], e["at_train"])
            assert same(row[e["name"] + "@longest"], e["at_longest"])
        for k in results:
            name = k.rsplit("@", 1)[0]
            if name not in set(evals["name"]):
                assert row[k] is None  # never 0 for a result the run lacks


def test_catalog_is_the_cli_table(fixture_runs):
    folder = fixture_runs["folder"]
    frame = lengen.runs(folder)
    out, _ = cli("runs", folder, "--format", "json")
    table = json.loads(out)
    assert len(frame) == len(table)
    for (_, row), want in zip(frame.iterrows(), table):
        for k, v in want.items():
            got = row[k]
            if v is None:
                assert got is None or (isinstance(got, float) and math.isnan(got)), k
            else:
                assert got == v, k
        assert lengen.open_run(row["path"]).info["id"] == row["run_id"] == row["run"]
    # Filters, columns and views mean what they mean in the CLI.
    rope = lengen.runs(folder, where="status=finished steps>=6")
    assert list(rope["run"]) == [lengen.open_run(fixture_runs["run"]).info["id"]]
    assert len(lengen.runs(folder, where=["tag=keep", "final_loss<1e9"])) == 1
    cols = lengen.runs(folder, columns=["model.hidden_size", "pe"])
    assert list(cols.columns[:5]) == ["run", "path", "run_id", "model.hidden_size", "pe"]
    kept = lengen.runs(folder, view="kept")
    assert list(kept["run"]) == list(rope["run"])
    with pytest.raises(lengen.CliError) as e:
        lengen.runs(folder, where="final_loss<abc")
    assert e.value.returncode == 64


def test_missing_cli_names_the_variable_and_the_build(fixture_runs, monkeypatch):
    monkeypatch.setenv("LENGEN", "/nonexistent/lengen")
    with pytest.raises(lengen.CliNotFound) as e:
        lengen.runs(fixture_runs["folder"])
    assert "LENGEN" in str(e.value) and "bash .ci/main" in str(e.value)
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    assert "bash .ci/main" in readme  # the build command the message names is the README's
    monkeypatch.delenv("LENGEN")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(lengen.CliNotFound) as e:
        lengen.runs(fixture_runs["folder"])
    assert "LENGEN" in str(e.value) and "bash .ci/main" in str(e.value)


def probe_show(run, intervention=None):
    extra = ["--intervention", intervention] if intervention else []
    out, _ = cli("probe", run, "--show", *extra)
    return out


def test_probes_match_probe_show(fixture_runs):
    path = fixture_runs["run"]
    run = lengen.open_run(path)
    p = run.probes
    out = probe_show(path)
    group = None
    checked = 0
    for line in out.splitlines():
        m = re.match(r"^(\S+)  \[(.*?); ([0-9.e+]+) prompts; (accuracy|squared error)\]$", line)
        if m:
            group = m.group(1)
            assert p.groups[group]["model"] == m.group(2)
            assert "%g" % p.groups[group]["prompts"] == m.group(3)
            continue
        m = re.match(r"^  (\S+)\s+(\d+) positions, mean ([-0-9.na]+), last ([-0-9.na]+)"
                     r"(?:, target block ([-0-9.na]+) \[([-0-9.na]+), ([-0-9.na]+)\])?$", line)
        if m:
            s = p.summary[(p.summary.probe == group) & (p.summary.curve == m.group(1))].iloc[0]
            assert s["length"] == int(m.group(2))
            assert "%.4f" % s["mean_over_positions"] == m.group(3)
            assert "%.4f" % s["last"] == m.group(4)
            if m.group(5):
                assert ["%.4f" % s[k] for k in ("target_mean", "target_low", "target_high")] \
                    == list(m.group(5, 6, 7))
            checked += 1
            continue
        m = re.match(r"^attention (\S+)\s+(\d+) tokens, (\d+) layers x (\d+) heads, (\d+) full "
                     r"maps; last layer: ([0-9.]+) of the last query's weight on the first "
                     r"fifth, ([0-9.]+) on the last$", line)
        if m:
            s = p.attention.set_index("setting").loc[m.group(1)]
            assert (s.tokens, s.layers, s.heads, s.map_prompts) == tuple(
                int(v) for v in m.group(2, 3, 4, 5))
            w = s.last_query_mean[-1].sum(axis=0) / s.heads  # [T], head-averaged
            T = s.tokens
            first = sum(w[k] for k in range(0, T, 2) if k < T // 5)
            last = sum(w[k] for k in range(0, T, 2) if k >= T - T // 5)
            assert ("%.3f" % first, "%.3f" % last) == m.group(6, 7)
            checked += 1
    assert checked == len(p.summary) + len(p.attention)
    assert set(p.groups) == {"duplicated/count_sweep", "duplicated/inst_noise_target",
                             "duplicated/instruction_position", "serial_position"}
    assert set(p.serial_position["curve"]) == {"begin", "middle", "end"}
    assert set(p.duplicated["probe"]) == {"duplicated/count_sweep",
                                          "duplicated/inst_noise_target",
                                          "duplicated/instruction_position"}
    under = run.probes_under(PROBE_INTERVENTION)
    assert run.probe_interventions() == [PROBE_INTERVENTION]
    assert len(under.attention) and probe_show(path, PROBE_INTERVENTION).startswith("attention")


def test_attention_reads_tiles(fixture_runs):
    import h5py

    run = lengen.open_run(fixture_runs["run"])
    settings = run.attention_settings()
    assert set(settings.setting) >= {"train", "long", "duplicated"}
    m = run.attention(layer=-1, head=1, setting="long")
    T = settings.set_index("setting").loc["long", "tokens"]
    assert m.shape == (T, T) and m.layer == 1
    with h5py.File(os.path.join(run.folder, "attention_maps.h5"), "r") as f:
        whole = f["long/maps"][0, 1, 1].astype(np.float32)
    assert np.array_equal(np.asarray(m), whole)
    assert np.array_equal(m[3:9, 0:5], whole[3:9, 0:5])
    assert np.array_equal(m.tile(0, 0), whole[:128, :128])
    assert np.allclose(whole.sum(axis=1), 1, atol=2e-2)  # each query's weights sum to 1
    under = run.attention(0, 0, setting="long", intervention=PROBE_INTERVENTION)
    assert os.path.basename(under.path) == "attention_maps.lambda_global=2_local=train.h5"
    with pytest.raises(KeyError):
        run.attention(0, 0, setting="no-such-setting")


def test_notes_tags_log_checkpoint(fixture_runs):
    run = lengen.open_run(fixture_runs["run"])
    assert run.notes == "first line\nsecond line"
    assert run.tags == ["keep", "tiny"]
    log = run.log
    assert list(log.columns[:9]) == ["step", "loss", "excess_loss", "learning_rate",
                                     "wall_time", "steps_per_sec", "n_points", "n_dims",
                                     "grad_norm"]
    assert list(log.step) == [0, 2, 4]  # logging_steps 2 of 6 steps
    assert run.pointwise.shape == (3, 7)
    ck = run.checkpoint()
    assert ck["step"] == 6 and ck["optimizer_step"] == 6
    assert set(ck["model"]) == set(ck["exp_avg"]) == set(ck["exp_avg_sq"])
    assert sum(v.size for v in ck["model"].values()) == run.info["parameter_count"]
    # 6 steps end before the curriculum's 7 points: the run trained on 5 (lengen info says so)
    assert run.curriculum["points"] == run.info["trained_points"] == 5
    assert run.curriculum["source"] == "recorded"
    imported = lengen.open_run(fixture_runs["imported"])
    assert imported.info["imported_from"] and imported.info["seed"] is None


def test_config_reads_as_a_yaml_library_reads_it(fixture_runs, fixture_sweep):
    """The package's own YAML reader (it depends on no YAML library) gives the stored config as
    PyYAML does (python3-yaml, which the tests' other fixtures install)."""
    yaml = pytest.importorskip("yaml")
    paths = [fixture_runs["run"], fixture_runs["imported"]]
    paths += [r.path for r in lengen.open_sweep(fixture_sweep).runs().values()]
    for path in paths:
        run = lengen.open_run(path)
        assert run.config == yaml.safe_load(run.config_text), path

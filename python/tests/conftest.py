"""Fixtures of the lengen package's tests: runs, analyses and a sweep that the C++ CLI writes
once per session (about 15 s on 2 cores), which every test then reads.

    LENGEN       the CLI under test (ctest passes $<TARGET_FILE:lengen>)
    LENGEN_PY_WORK  the scratch folder (default: pytest's temporary folder)

The runs are tests/support/tiny.yaml's: 2 layers of width 16, 6 steps.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))  # the package from the tree, not an install
TINY = os.path.join(ROOT, "tests", "support", "tiny.yaml")
SMALL = ["--prompts", "16", "--bootstrap", "20", "--threads", "1", "--quiet"]
PROBE_SIZES = ["--prompts", "8", "--bootstrap", "5", "--map-prompts", "1",
               "--attention-prompts", "2", "--long-points", "12", "--test-length", "14",
               "--noise-counts", "1,2", "--lengths", "9", "--threads", "1", "--quiet"]
PROBE_INTERVENTION = "lambda:global=2,local=train"  # ':' and ',' make the maps file's name safe
EVAL_INTERVENTION = "yarn"


def lengen_path():
    exe = os.environ.get("LENGEN") or shutil.which("lengen")
    if not exe:
        pytest.exit("set LENGEN to the lengen CLI under test (python/tests/run.py does)", 2)
    return os.path.abspath(exe)


def cli(*args, ok=(0,), timeout=120, env=None):
    """Runs `lengen ARGS`; returns (stdout, stderr); fails the test on another exit code."""
    proc = subprocess.run([lengen_path()] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    if proc.returncode not in ok:
        pytest.fail("`lengen %s` exited %d:\n%s%s" % (" ".join(map(str, args)), proc.returncode,
                                                     proc.stdout[-2000:], proc.stderr[-2000:]))
    return proc.stdout, proc.stderr


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    named = os.environ.get("LENGEN_PY_WORK")
    if named:
        shutil.rmtree(named, ignore_errors=True)
        os.makedirs(named)
        return named
    return str(tmp_path_factory.mktemp("lengen"))


def _metrics_json(path, run_file):
    """A reference-style metrics.json (method -> model -> statistics) for `lengen import`."""
    n = 7
    stats = {"mean": [0.5 + 0.1 * k for k in range(n)], "std": [0.2] * n,
             "bootstrap_low": [0.4 + 0.1 * k for k in range(n)],
             "bootstrap_high": [0.6 + 0.1 * k for k in range(n)]}
    with open(path, "w") as f:
        json.dump({"standard": {"Transformer": stats, "Least Squares": stats}}, f)


@pytest.fixture(scope="session")
def fixture_runs(work):
    """The runs folder: `run`, a tiny RoPE run evaluated (standard, ood_length, and ood_length
    under yarn), probed (every probe, and the attention probe under lambda), with a reference
    metrics.json imported, notes and tags; `imported`, the same run exported as a reference
    run folder and imported back (import-run)."""
    runs = os.path.join(work, "runs")
    out, _ = cli("train", TINY, "--out", runs, "--threads", "1", "--quiet")
    run = out.split()[-1]
    cli("eval", run, "--methods", "standard,ood_length", "--ood-factor", "2", *SMALL)
    # The same --ood-factor: an intervention's evaluation evaluates the plain model too, and
    # would replace the stored plain ood_length with one of the default factor.
    cli("eval", run, "--methods", "ood_length", "--intervention", EVAL_INTERVENTION,
        "--ood-factor", "2", *SMALL)
    cli("probe", run, "--all", *PROBE_SIZES)
    cli("probe", run, "--attention", "--intervention", PROBE_INTERVENTION, *PROBE_SIZES)
    metrics = os.path.join(work, "metrics.json")
    _metrics_json(metrics, run)
    cli("import", metrics, run)
    cli("note", run, "--text", "first line\nsecond line", "--tags", "keep,tiny")
    exported = os.path.join(work, "exported")
    cli("export-run", run, "--out", exported, "--quiet")
    out, _ = cli("import-run", exported, "--out", os.path.join(runs, "imported"), "--quiet")
    imported = out.split()[-1]
    views = {"format": "lengen-views", "version": 1,
             "views": [{"name": "kept", "filter": "tag=keep",
                        "columns": {"hidden": [], "extra": ["min_loss"]}}]}
    with open(os.path.join(runs, "lengen-views.json"), "w") as f:
        json.dump(views, f)
    return {"folder": runs, "run": run, "imported": imported}


SWEEP_YAML = """\
name: py-sweep
base: {base}
axes:
  pe: [rope, alibi]
  seed: 2
stages:
  train: {{}}
  eval:
    methods: [standard, ood_length]
    prompts: 16
    ood_factor: 2
    bootstrap: 20
    seed: 1
  probe: {{serial_position: true, prompts: 4}}
"""


@pytest.fixture(scope="session")
def fixture_sweep(work):
    """A sweep of 2 encodings x 2 seeds of the tiny config, each cell evaluated and probed
    (serial position), aggregated."""
    folder = os.path.join(work, "S")
    os.makedirs(folder)
    with open(os.path.join(folder, "sweep.yaml"), "w") as f:
        f.write(SWEEP_YAML.format(base=TINY))
    cli("sweep", "run", folder, "--jobs", "2", "--threads-per-job", "1", "--quiet", timeout=300)
    cli("sweep", "aggregate", folder, "--quiet")
    return folder

"""docs/python.md runs: its Python blocks, in order and in one namespace (a notebook), in a
folder where `runs/` is the fixture runs folder and `S/` the fixture sweep. Plots go to
matplotlib's Agg backend (no display)."""

import contextlib
import io
import os
import re

import pytest

from conftest import ROOT

PAGE = os.path.join(ROOT, "docs", "python.md")


def python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def test_every_snippet_of_docs_python_md_runs(fixture_runs, fixture_sweep, work, monkeypatch):
    if not os.environ.get("LENGEN_REQUIRE_PYTHON_TORCH"):  # CI installs python3-matplotlib
        pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = os.path.join(work, "notebook")
    os.makedirs(folder, exist_ok=True)
    for name, target in (("runs", fixture_runs["folder"]), ("S", fixture_sweep)):
        if not os.path.lexists(os.path.join(folder, name)):
            os.symlink(target, os.path.join(folder, name))
    monkeypatch.chdir(folder)
    blocks = python_blocks(open(PAGE).read())
    assert len(blocks) >= 6, "docs/python.md lost its snippets"
    namespace = {"__name__": "__notebook__"}
    for i, code in enumerate(blocks, 1):
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, "docs/python.md block %d" % i, "exec"), namespace)
        except Exception as e:
            raise AssertionError("docs/python.md, Python block %d fails: %r\n%s" % (i, e, code))
    assert plt.get_fignums(), "the page draws no figure"
    plt.close("all")
    # What the page says its snippets print.
    assert namespace["by_pe"].index.tolist() == ["ALiBi", "RoPE"]
    assert namespace["m"].shape == (24, 24)

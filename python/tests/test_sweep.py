"""A sweep folder through the package: its cells and their state as `lengen sweep status`
says, aggregate.h5 as `lengen sweep aggregate` prints it, and the runs of the sweep grouped by
pe with the numbers of `lengen sweep table` (the notebook session of issue 83)."""

import json
import re

import numpy as np
import pytest

import lengen
from conftest import cli


def test_cells_and_state_match_sweep_status(fixture_sweep, monkeypatch):
    s = lengen.open_sweep(fixture_sweep)
    cells = s.cells
    out, _ = cli("sweep", "status", fixture_sweep, "--json")
    status = json.loads(out)
    assert list(cells["name"]) == [c["name"] for c in status]
    for (_, row), want in zip(cells.iterrows(), status):
        assert row["state"] == want["state"] == "done"
        assert row["stage"] == want["stage"]
        assert row["run"] == want["run"]
        assert row["step"] == want["step"] and row["total_steps"] == want["total_steps"]
        assert row["last_loss"] == pytest.approx(want["last_loss"], rel=1e-12)
        for k, v in want["axes"].items():
            assert str(row[k]) == v  # seed as a number, the others as written
        run = lengen.open_run(row["run"])
        assert run.info["sweep"] == "py-sweep" and run.info["cell"] == row["name"]
        assert run.info["sweep_axes"] == " ".join("%s=%s" % kv for kv in want["axes"].items())
    # Without the CLI the state comes from the cells' own files.
    monkeypatch.setenv("LENGEN", "/nonexistent/lengen")
    assert list(lengen.open_sweep(fixture_sweep).cells["state"]) == ["done"] * len(status)


def aggregate_printout(folder):
    """`lengen sweep aggregate` 's summary: {(method, group): (train mean, low, high, position,
    longest mean, low, high, position)} as printed (%.4g)."""
    out, _ = cli("sweep", "aggregate", folder)
    table, method = {}, None
    for line in out.splitlines():
        m = re.match(r"^(\S+) \(mean \[band\] over seeds; @ position\)$", line)
        if m:
            method = m.group(1)
            continue
        m = re.match(r"^(\S+)\s+(\d+)\s+(\S+)\s+(\S+) \[(\S+), (\S+)\] @(\d+)\s+(\S+) \[(\S+), "
                     r"(\S+)\] @(\d+)$", line)
        if m and method:
            table[(method, "pe=" + m.group(1))] = m.groups()[1:]
    return table


def test_aggregate_matches_sweep_aggregate(fixture_sweep):
    s = lengen.open_sweep(fixture_sweep)
    printed = aggregate_printout(fixture_sweep)
    agg, sets = s.aggregate, s.aggregate_sets
    assert sets.attrs["group_by"] == ["pe"] and sets.attrs["missing"] == []
    evals = sets[sets.kind == "eval"]
    assert len(printed) == len(evals) == 4
    for _, st in evals.iterrows():
        seeds, band, *values = printed[(st["what"], st["group"])]
        model = agg[(agg.set == st["set"]) & (agg.curve == "model")]
        assert model["transformer"].all() and (model["seeds"] == int(seeds)).all()
        assert model["band"].iloc[0] == band
        train, last = st["trained_points"] - 1, len(model) - 1
        shown = []
        for pos in (train, last):
            r = model.iloc[pos]
            shown += ["%.4g" % r["mean"], "%.4g" % r["band_low"], "%.4g" % r["band_high"],
                      str(pos)]
        assert shown == list(values), st["set"]
    assert set(agg[agg.kind == "probe"]["curve"]) == {"begin", "middle", "end"}
    # A probe set's zero estimator is its cells' (dims for a regression), as an evaluation's is.
    probes = sets[sets.kind == "probe"]
    assert len(probes) and (probes["zero_estimator"] == probes["dims"]).all()
    assert (evals["zero_estimator"] == evals["dims"]).all()


def test_sweep_table(fixture_sweep):
    s = lengen.open_sweep(fixture_sweep)
    out, _ = cli("sweep", "table", fixture_sweep, "--format", "json")
    want = json.loads(out)
    got = s.table()
    assert list(got["cell"]) == [r["cell"] for r in want]
    for (_, row), w in zip(got.iterrows(), want):
        for k, v in w.items():
            assert row[k] == v or (v is None and row[k] != row[k]), k


RESULTS = ["final_loss", "min_loss", "steps_per_s", "wall_s", "standard@train",
           "standard@longest", "ood_length@train", "ood_length@longest"]


def test_runs_of_a_sweep_grouped_by_pe(fixture_sweep):
    """The issue's closing notebook session: the sweep's runs from `lengen.runs`, grouped by pe,
    hold the numbers `lengen sweep table` prints for each cell, and their means per pe."""
    runs = lengen.runs(fixture_sweep)
    runs["cell"] = [lengen.open_run(p).info["cell"] for p in runs["path"]]
    out, _ = cli("sweep", "table", fixture_sweep, "--format", "json")
    table = {r["cell"]: r for r in json.loads(out)}
    assert sorted(runs["cell"]) == sorted(table)
    for _, row in runs.iterrows():
        for k in RESULTS:
            assert row[k] == table[row["cell"]][k], (row["cell"], k)
    by_pe = runs.groupby("pe")[RESULTS].mean()
    words = {"RoPE": "rope", "ALiBi": "alibi"}  # the display names and the sweep's words
    for pe, means in by_pe.iterrows():
        cells = [r for r in table.values() if r["pe"] == words[pe]]
        for k in RESULTS:
            assert means[k] == pytest.approx(np.mean([c[k] for c in cells]), rel=1e-12)

"""Reads everything the package offers of a run or a sweep, as a notebook would, touching every
dataset and attribute it knows (the format and damage tests drive it)."""

import numpy as np

import lengen


def read_run(path):
    """Opens the run and reads every property, every evaluation's curves, every probe and one
    tile of every attention map; returns the Run."""
    run = lengen.open_run(path)
    run.info
    run.log
    run.pointwise
    run.curriculum
    run.notes
    run.tags
    run.position_encoding
    for slot in (0, 1):
        try:
            run.checkpoint(slot)
        except lengen.RunFileError:
            if slot == run.checkpoint()["slot"]:
                raise  # the current slot must read; the other may be absent or stale
    table = run.evaluations()
    for _, e in table.iterrows():
        run.curve(e["method"], e["intervention"], e["imported"])
    for spec in [None] + run.probe_interventions():
        probes = run.probes_under(spec) if spec else run.probes
        probes.duplicated
        probes.serial_position
        for s in probes.attention_rows:
            if s["map_prompts"] > 0:
                m = run.attention(0, 0, setting=s["setting"], intervention=spec)
                np.asarray(m[0:2, 0:2])
    return run


def read_sweep(path):
    s = lengen.open_sweep(path)
    s.cells
    s.aggregate
    s.aggregate_sets
    return s

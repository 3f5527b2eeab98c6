"""A sweep folder (docs/sweep-format.md): its cells, their state and aggregate.h5."""

import json
import os

import numpy as np
import pandas as pd

from . import _h5, cli
from ._h5 import RunFileError
from .run import open_run

AGGREGATE_FORMAT = 1


def _read_json(path, default=None):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        return default
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise RunFileError(path, None, "not readable JSON (%s)" % e) from None


class Sweep:
    """A sweep folder, read-only.

        s = lengen.open_sweep("S")
        s.cells            # a row per cell: its axes, task, pe, seed, run, stage, state
        s.aggregate        # aggregate.h5's curves: a row per (set, curve, position)
        s.table()          # `lengen sweep table S` as a DataFrame
    """

    def __init__(self, path):
        path = os.fspath(path)
        if os.path.basename(path) in ("sweep.yaml", "index.json"):
            path = os.path.dirname(path)
        self.path = os.path.abspath(path)
        index_file = os.path.join(self.path, "index.json")
        self.index = _read_json(index_file)
        if self.index is None:
            raise RunFileError(index_file, None, "no sweep index here (write one with "
                               "`lengen sweep new` or `lengen sweep run`)")
        if not isinstance(self.index, dict) or self.index.get("format") != "lengen-sweep-index":
            raise RunFileError(index_file, None, "not a LenGen sweep index")
        self.name = self.index.get("name", os.path.basename(self.path))
        self.axes = list(self.index.get("axes", []))

    def __repr__(self):
        return "<lengen.Sweep %s: %d cells, axes %s, %s>" % (
            self.name, len(self.index.get("cells", [])), ", ".join(self.axes), self.path)

    @property
    def cells(self):
        """A row per cell, in grid order: index, name, each axis as written in sweep.yaml
        (pe=rope; the seed as a number), task, encoding (the display name: RoPE), run (the
        run file, absolute), stage, message and exit_code (the cell's
        cell.json), cancelled (a `sweep cancel` mark) and state (pending, running, requeued,
        cancelled, stopped, done, failed: `lengen sweep status`'s, when the CLI is found;
        else from the cell's files alone), step, total_steps, last_loss, eval_done,
        probe_done."""
        rows = []
        for c in self.index.get("cells", []):
            folder = os.path.join(self.path, "cells", c["name"])
            cell = _read_json(os.path.join(folder, "cell.json"), {}) or {}
            row = {"index": c["index"], "name": c["name"]}
            for k in self.axes:
                row[k] = c.get("axes", {}).get(k)
            row.setdefault("task", c.get("task"))
            row["seed"] = c.get("seed")  # the axis's text as a number, or the config's seed
            row.update(encoding=c.get("pe"),
                       run=os.path.join(self.path, c["run"]) if c.get("run") else None,
                       stage=cell.get("stage"), message=cell.get("message", ""),
                       exit_code=cell.get("exit_code"),
                       cancelled=os.path.exists(os.path.join(folder, "cancel.json")))
            rows.append(row)
        frame = pd.DataFrame(rows)
        try:
            status = self.status()
        except cli.CliNotFound:
            status = None
        if status is not None and len(status):
            keep = ["name", "state", "step", "total_steps", "last_loss", "eval_done",
                    "probe_done", "executor", "job_id", "scheduler_state"]
            frame = frame.merge(status[[k for k in keep if k in status]], on="name", how="left")
        elif len(frame):
            frame["state"] = [self._state_from_files(r) for r in rows]
        return frame

    @staticmethod
    def _state_from_files(row):
        """A cell's state without the CLI: what its cell.json and run file say (no process
        or scheduler is asked, so a cell that is running reads as its last stage)."""
        stage = row["stage"]
        if stage in ("done", "failed", "stopped"):
            return stage
        if row["cancelled"]:
            return "cancelled"
        if stage in ("train", "eval", "probe"):
            return "running"
        return "pending"

    def status(self):
        """`lengen sweep status DIR --json` as a DataFrame (the state merged from the files,
        the processes and Slurm, as the studio shows it)."""
        # Exit 5 (a cell failed) and 8 (unfinished) print the table too.
        text = cli.run(["sweep", "status", self.path, "--json"], ok=(0, 5, 8))
        rows = json.loads(text or "[]")
        for r in rows:
            for k, v in (r.pop("axes", None) or {}).items():
                r["axis:" + k] = v
        return pd.DataFrame(rows)

    def table(self, columns=None, format="json"):
        """`lengen sweep table DIR --format json`: a row per cell with its axes (in the sweep's
        own words), status, steps, losses and each evaluation at the training and the longest
        length, as a DataFrame."""
        args = ["sweep", "table", self.path, "--format", format]
        if columns is not None:
            args += ["--columns", ",".join([columns] if isinstance(columns, str) else columns)]
        return pd.DataFrame(json.loads(cli.run(args) or "[]"))

    def runs(self):
        """The cells' runs that exist, as lengen.Run objects keyed by cell name."""
        out = {}
        for c in self.index.get("cells", []):
            run = os.path.join(self.path, c["run"]) if c.get("run") else None
            if run and os.path.exists(run):
                out[c["name"]] = open_run(run)
        return out

    # -- aggregate.h5 -------------------------------------------------------------------

    @property
    def aggregate_path(self):
        return os.path.join(self.path, "aggregate.h5")

    def _aggregate(self):
        if not os.path.lexists(self.aggregate_path):
            return None
        with _h5.File(self.aggregate_path) as f:
            f.check_format("lengen-sweep-aggregate", "sweep aggregate", AGGREGATE_FORMAT,
                           versioned="aggregate")
            head = {"sweep": f.attr_str("/", "sweep"),
                    "group_by": [l for l in f.attr_str("/", "group_by").split("\n") if l],
                    "bootstrap_trials": f.attr_int("/", "bootstrap_trials"),
                    "missing": [l for l in f.attr_str("/", "missing").split("\n") if l]}
            sets_text = f.attr_str("/", "sets")
            sets, curves = [], []
            for path in [l for l in sets_text.split("\n") if l]:
                s = {"set": path}
                parts = path.split("/")
                s["kind"] = parts[0]  # eval or probe
                s["what"] = "/".join(parts[1:-1])  # the method, or the probe's path
                s["group"] = parts[-1]
                for k in ("axes", "cells", "task", "order"):
                    v = f.attr_str(path, k, default="", required=False)
                    s[k] = [l for l in v.split("\n") if l] if k != "task" else v
                for k in ("train_points", "trained_points", "n_points", "dims", "classification"):
                    s[k] = f.attr_int(path, k, default=None, required=False)
                s["zero_estimator"] = (f.attr_numbers(path, "zero_estimator")[0]
                                       if f.has_attr(path, "zero_estimator") else None)
                if s["trained_points"] is None:  # files written before it: train_points
                    s["trained_points"] = s["train_points"]
                for key in s["order"] or f.members(path):
                    c = path + "/" + key
                    cols = {k: f.read(c + "/" + k, "f", ndim=1)
                            for k in ("mean", "band_low", "band_high")}
                    cols["seeds"] = f.read(c + "/seeds", "i", ndim=1)
                    n = len(cols["mean"])
                    if any(len(v) != n for v in cols.values()):
                        raise f.error(c, "has columns of different lengths (damaged file)")
                    curves.append(pd.DataFrame({
                        "set": path, "kind": s["kind"], "what": s["what"], "group": s["group"],
                        "curve": key,
                        "label": f.attr_str(c, "label", default=key, required=False),
                        "band": f.attr_str(c, "band", default="", required=False),
                        "transformer": bool(f.attr_int(c, "transformer", default=0,
                                                       required=False)),
                        "position": np.arange(n), **cols}))
                sets.append(s)
        return head, pd.DataFrame(sets), (pd.concat(curves, ignore_index=True) if curves
                                          else pd.DataFrame())

    @property
    def aggregate(self):
        """aggregate.h5's curves (`lengen sweep aggregate`): a row per (set, curve, position)
        with set (eval/<method>/<group> or probe/<path>/<group>), kind, what (the method or
        probe), group (pe=rope, ...), curve (model for the trained model, else the baseline's
        key), label, band (bootstrap, min-max, sd, se, none), transformer, position, mean,
        band_low, band_high, seeds (how many seeds reach it). None before aggregation."""
        got = self._aggregate()
        return None if got is None else got[2]

    @property
    def aggregate_sets(self):
        """aggregate.h5's sets, a row each, with their attributes (axes, cells, task,
        train_points, trained_points, n_points, dims, zero_estimator, classification, order);
        `.attrs` holds the file's (sweep, group_by, bootstrap_trials, missing)."""
        got = self._aggregate()
        if got is None:
            return None
        got[1].attrs.update(got[0])
        return got[1]


def open_sweep(path):
    """The sweep folder at `path` (or its sweep.yaml / index.json)."""
    return Sweep(path)

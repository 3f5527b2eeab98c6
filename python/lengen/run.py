"""One run: `run.h5` and, beside it, `analysis.h5` and `attention_maps*.h5`.

docs/run-format.md and docs/analysis-format.md describe the files; every value here is read as
LenGen's own readers read it (engine/src/io), with the same fallbacks for files written before
a field existed and the same refusals of damaged ones. Run reads its evaluations through
evaluations.py and its probes and attention maps through probes.py.
"""

import math
import os

import numpy as np
import pandas as pd

from . import _h5, _yaml
from ._h5 import RunFileError
from .evaluations import METHOD_ORDER, EvaluationsMixin, training_position
from .probes import (PROBE_GROUPS, PROBE_MARKS, AttentionMap, Probes, ProbesMixin,
                     attention_maps_name)

# The names lengen.run had before evaluations.py and probes.py were split from it, kept
# importable from here.
__all__ = ["RUN_FORMAT", "ANALYSIS_FORMAT", "LOG_COLUMNS", "OPTIONAL_LOG_COLUMNS",
           "METHOD_ORDER", "PROBE_GROUPS", "PROBE_MARKS", "STATUS_LABELS", "locate_run_file",
           "attention_maps_name", "curriculum_after", "training_position", "Run", "Probes",
           "AttentionMap", "open_run", "RunFileError"]

RUN_FORMAT = 1  # the newest run-file format this package reads
ANALYSIS_FORMAT = 1

# The log columns every run has, and their types (docs/run-format.md, /log/<column>).
LOG_COLUMNS = {"step": "i", "loss": "f", "excess_loss": "f", "learning_rate": "f",
               "wall_time": "f", "steps_per_sec": "f", "n_points": "i", "n_dims": "i"}
# Columns added after format 1 began: a run written before one reads it as all NaN.
OPTIONAL_LOG_COLUMNS = ("grad_norm",)
STATUS_LABELS = {"cancelled": "stopped"}  # what `lengen info` and the studio call a status


def locate_run_file(path):
    """A run folder or its run.h5 -> the run.h5 path (as `lengen info` takes either)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "run.h5")
    if not os.path.lexists(path):
        raise RunFileError(path, None, "run file not found")
    return path


def curriculum_after(config, steps_done):
    """(dims, points) the curriculum gives the step after `steps_done` steps (engine
    RunConfig::curriculumAfter): start + increment * (step // interval), capped at end."""
    step = max(steps_done, 1) - 1
    cur = config.get("task", {}).get("curriculum", {})

    def at(axis):
        a = cur.get(axis, {})
        start, end = int(a.get("start", 0)), int(a.get("end", 0))
        inc, interval = int(a.get("increment", 0)), max(int(a.get("interval", 1)), 1)
        return min(start + inc * (max(step, 0) // interval), end)

    return at("dims"), at("points")


class Run(EvaluationsMixin, ProbesMixin):
    """A LenGen run, read-only. Every property reads the files again, so a run that trains,
    or is evaluated meanwhile, shows what is there now.

        run = lengen.open_run("runs/linear_regression/dim_2-4/20261206/ab12cd34")
        run.info["status"], run.log.tail(), run.curve("ood_length")
    """

    def __init__(self, path):
        self.path = os.path.abspath(locate_run_file(path))
        self.folder = os.path.dirname(self.path)
        with self._open() as f:
            self._check_header(f)
            self.config_text = f.read_str("config")
        try:
            self.config = _yaml.loads(self.config_text)
        except _yaml.YamlError as e:
            raise RunFileError(self.path, "/config",
                               "not the YAML LenGen writes (%s)" % e) from None
        if not isinstance(self.config, dict):
            raise RunFileError(self.path, "/config", "not a YAML mapping (damaged file)")

    def __repr__(self):
        try:
            i = self.info
            return "<lengen.Run %s %s %s %s, %s/%s steps, %s>" % (
                i["id"], i["task"], i["pe"], i["status"], i["steps"], i["total_steps"],
                self.path)
        except RunFileError as e:
            return "<lengen.Run %s (%s)>" % (self.path, e.why)

    # -- files --------------------------------------------------------------------------

    def _open(self):
        return _h5.File(self.path, run_file=self.path)

    @property
    def analysis_path(self):
        return os.path.join(self.folder, "analysis.h5")

    def _open_analysis(self):
        """analysis.h5 with its format checked, or None when the run has none."""
        if not os.path.lexists(self.analysis_path):
            return None
        f = _h5.File(self.analysis_path)
        try:
            f.check_format("lengen-analysis", "analysis file", ANALYSIS_FORMAT)
            f.attr_str("/", "run_id", required=False)
        except BaseException:
            f.close()
            raise
        return f

    def _check_header(self, f):
        return f.check_format("lengen-run", "run file", RUN_FORMAT)

    # -- the run ------------------------------------------------------------------------

    @property
    def info(self):
        """What `lengen info` says of the run, as a dict.

        id, status (as `lengen info` names it: `stopped` for a stored `cancelled`,
        `interrupted` for a `running` whose writer is gone), stored_status, writer, steps (as
        the Runs list counts them: the last logged step + 1 or the checkpoint's step, at most
        total_steps), total_steps, checkpoint_step, created, imported_from, sweep, cell,
        sweep_axes, task, pe, backbone, seed (None for an imported run), device, host (None
        in runs written before it), precision,
        parameter_count, engine_version, format_version, log_rows, last_loss, min_loss,
        steps_per_s (mean over the rows that timed their steps), wall_s, trained_dims,
        trained_points (the training length), position_constants.
        """
        with self._open() as f:
            a = {}
            a["format_version"] = self._check_header(f)
            for k in ("engine_version", "run_id", "created_at", "task", "position_encoding",
                      "backbone", "device"):
                a[k] = f.attr_str("/", k)
            a["seed"] = f.attr_int("/", "seed")
            precision = f.attr_str("/", "precision", default="fp32", required=False)
            if precision not in ("fp32", "tf32", "bf16"):
                raise f.error("/@precision", "is %r, not fp32, tf32 or bf16 (damaged file)"
                              % precision)
            optional = {k: f.attr_str("/", k, default=None, required=False)
                        for k in ("imported_from", "sweep", "sweep_cell", "sweep_axes", "notes",
                                  "tags", "host")}
            total = f.attr_int("/", "total_steps")
            params = f.attr_int("/", "parameter_count")
            status = f.read_str("status")
            log = self._read_log(f, columns=("step", "loss", "steps_per_sec", "wall_time"))
            checkpoint = self._checkpoint_step(f)
            constants = self._position_constants(f)
            reached = self._reached(f, total, checkpoint)
        stored = status
        writer = ""
        if status == "running":
            if _h5.writer_alive(self.path):
                writer = _h5.writer_holder(self.path)
            else:
                status = "interrupted"
        loss = log["loss"].to_numpy()
        finite = loss[np.isfinite(loss)]
        rates = log["steps_per_sec"].to_numpy()
        rates = rates[np.isfinite(rates) & (rates > 0)]
        wall = log["wall_time"].to_numpy()
        wall = wall[np.isfinite(wall)]
        last_step = int(log["step"].iloc[-1]) if len(log) else -1
        steps = max(0, checkpoint, last_step + 1)
        if total > 0:
            steps = min(steps, total)
        imported = optional["imported_from"]
        return {
            "id": a["run_id"], "status": STATUS_LABELS.get(status, status),
            "stored_status": stored, "writer": writer, "steps": steps, "total_steps": total,
            "checkpoint_step": checkpoint, "created": a["created_at"],
            "imported_from": imported, "sweep": optional["sweep"],
            "cell": optional["sweep_cell"] if optional["sweep"] is not None else None,
            "sweep_axes": optional["sweep_axes"] if optional["sweep"] is not None else None,
            "task": a["task"], "pe": a["position_encoding"], "backbone": a["backbone"],
            # The Python code seeds nothing: an imported run's training seed is unknown.
            "seed": None if imported else a["seed"], "device": a["device"],
            "host": optional["host"], "precision": precision, "parameter_count": params,
            "engine_version": a["engine_version"], "format_version": a["format_version"],
            "log_rows": len(log), "last_loss": float(loss[-1]) if len(loss) else math.nan,
            "min_loss": float(finite.min()) if len(finite) else math.nan,
            "steps_per_s": float(rates.mean()) if len(rates) else math.nan,
            "wall_s": float(wall[-1]) if len(wall) else math.nan,
            "trained_dims": reached["dims"], "trained_points": reached["points"],
            "position_constants": constants,
        }

    @property
    def notes(self):
        """The researcher's notes (`lengen note --text`), '' when none."""
        with self._open() as f:
            return f.attr_str("/", "notes", default="", required=False)

    @property
    def tags(self):
        """The run's tags, a list (stored comma-separated, trimmed, empty ones dropped)."""
        with self._open() as f:
            joined = f.attr_str("/", "tags", default="", required=False)
        return [t.strip() for t in joined.split(",") if t.strip()]

    @property
    def status(self):
        return self.info["status"]

    def _checkpoint_step(self, f):
        current = self._current_slot(f)
        if current < 0:
            return 0
        return f.read("checkpoint/slot%d/step" % current, "i", shape=()).item()

    def _current_slot(self, f):
        current = f.read("checkpoint/current", "i", shape=()).item()
        if current not in (-1, 0, 1):
            raise f.error("checkpoint/current", "is %d; it names slot 0 or 1, or -1 (damaged "
                          "file)" % current)
        return current

    def _position_constants(self, f):
        if not f.exists("position_encoding"):
            return {}
        out = {}
        for name in f.attr_names("position_encoding"):
            out[name] = f.attr_numbers("position_encoding", name, "f")
        return out

    @property
    def position_encoding(self):
        """The encoding's derived constants (RoPE inv_freq, position_scale, mscale; ALiBi
        slopes) as float64 arrays."""
        with self._open() as f:
            return self._position_constants(f)

    # -- the training log ---------------------------------------------------------------

    def _read_log(self, f, columns=None):
        """The log as a DataFrame, every column trimmed to the shortest (a SWMR reader may see
        one column a row longer than another while a training appends)."""
        names = f.members("log")
        wanted = list(LOG_COLUMNS) + [n for n in names if n not in LOG_COLUMNS]
        if columns is not None:
            wanted = list(columns)
        data = {}
        for name in wanted:
            if name == "pointwise":
                continue
            if name not in names:
                if name in LOG_COLUMNS:
                    raise f.error("log/" + name, "missing (damaged file)")
                continue
            kind = LOG_COLUMNS.get(name, "i" if f.dataset("log/" + name).dtype.kind in "iu"
                                   else "f")
            data[name] = f.read("log/" + name, kind, ndim=1)
        rows = min((len(v) for k, v in data.items() if k not in OPTIONAL_LOG_COLUMNS),
                   default=0)
        out = {}
        for k, v in data.items():
            if k in OPTIONAL_LOG_COLUMNS and len(v) < rows:  # an older writer resumed it
                v = np.concatenate([v.astype(np.float64), np.full(rows - len(v), np.nan)])
            out[k] = v[:rows]
        if columns is None:
            for k in OPTIONAL_LOG_COLUMNS:
                out.setdefault(k, np.full(rows, np.nan))
        return pd.DataFrame(out)

    @property
    def log(self):
        """The training log, a row per logged step: step, loss, excess_loss, learning_rate,
        wall_time, steps_per_sec, n_points, n_dims, grad_norm (NaN where not measured) and any
        other column the file logs."""
        with self._open() as f:
            return self._read_log(f)

    @property
    def pointwise(self):
        """The task metric per in-context position at each logged step: a DataFrame indexed by
        step, a column per position k (NaN past the step's n_points)."""
        with self._open() as f:
            steps = f.read("log/step", "i", ndim=1)
            shape = f.shape("log/pointwise")
            if len(shape) != 2:
                raise f.error("log/pointwise", "has %d dimensions, 2 expected (damaged file)"
                              % len(shape))
            rows = min(shape[0], len(steps))
            values = f.read("log/pointwise", "f4", sel=np.s_[:rows, :])
        frame = pd.DataFrame(values.astype(np.float64), index=pd.Index(steps[:rows], name="step"))
        frame.columns.name = "k"
        return frame

    # -- curriculum ----------------------------------------------------------------------

    def _reached(self, f, total, checkpoint):
        """What the run trained on last (engine readReached): the recorded
        /curriculum_reached, else the log's last row, else the config at the checkpoint."""
        if f.exists("curriculum_reached"):
            v = f.read("curriculum_reached", "i", shape=(3,))
            if v[0] > 0:
                if (v[0] > total or v[1] < 1 or v[2] < 1 or v[1] > 1_000_000
                        or v[2] > 100_000_000):
                    raise f.error("curriculum_reached", "holds %d, %d, %d (damaged file)"
                                  % tuple(v))
                return {"steps": int(v[0]), "dims": int(v[1]), "points": int(v[2]),
                        "source": "recorded"}
        r = {"steps": 0, "dims": 0, "points": 0, "source": None}
        log = self._read_log(f, columns=("step", "n_points", "n_dims"))
        if len(log):
            r = {"steps": int(log["step"].iloc[-1]) + 1, "dims": int(log["n_dims"].iloc[-1]),
                 "points": int(log["n_points"].iloc[-1]), "source": "log"}
        if checkpoint > r["steps"]:
            dims, points = curriculum_after(self.config, checkpoint)
            r = {"steps": checkpoint, "dims": dims, "points": points, "source": "config"}
        return r

    @property
    def curriculum(self):
        """The curriculum: where the run got to (steps, dims, points: its training length;
        source says where that came from: recorded, log or config) and the config's
        schedule (dims and points: start, end, increment, interval). `at_checkpoint` is
        the checkpoint's [dims, points] for the next step."""
        with self._open() as f:
            total = f.attr_int("/", "total_steps")
            checkpoint = self._checkpoint_step(f)
            reached = self._reached(f, total, checkpoint)
            slot = self._current_slot(f)
            at = (f.read("checkpoint/slot%d/curriculum" % slot, "i", shape=(2,)).tolist()
                  if slot >= 0 else None)
            recorded = (f.read("curriculum_reached", "i", shape=(3,)).tolist()
                        if f.exists("curriculum_reached") else None)
        schedule = self.config.get("task", {}).get("curriculum", {})
        return dict(reached, schedule=schedule, at_checkpoint=at, recorded=recorded)

    def _trained_points_at(self, checkpoint_step, fallback):
        """The training length of a result stored without trained_points: the curriculum's at
        its checkpoint step, else the run's, else `fallback` (evaluations and probes)."""
        try:
            if checkpoint_step > 0:
                return curriculum_after(self.config, checkpoint_step)[1]
            points = self.info["trained_points"]
            return points if points > 0 else fallback
        except RunFileError:
            return fallback

    # -- checkpoints --------------------------------------------------------------------

    def checkpoint(self, slot=None):
        """The latest complete checkpoint (or `slot` 0 / 1), read whole: a dict of step,
        wall_time, curriculum ([dims, points] for the next step), model, exp_avg, exp_avg_sq
        (name -> float32 array, PyTorch state-dict keys), optimizer_step, rng_state (uint8).
        None when the run has no checkpoint yet."""
        with self._open() as f:
            if slot is None:
                slot = self._current_slot(f)
                if slot < 0:
                    return None
            g = "checkpoint/slot%d" % slot

            def tensors(path):
                return {k: f.read(path + "/" + k, "f4") for k in f.members(path)}

            return {
                "slot": slot,
                "step": f.read(g + "/step", "i", shape=()).item(),
                "wall_time": f.read(g + "/wall_time", "f", shape=()).item(),
                "curriculum": f.read(g + "/curriculum", "i", shape=(2,)).tolist(),
                "model": tensors(g + "/model"),
                "exp_avg": tensors(g + "/optimizer/exp_avg"),
                "exp_avg_sq": tensors(g + "/optimizer/exp_avg_sq"),
                "optimizer_step": f.read(g + "/optimizer/step", "i", shape=()).item(),
                "rng_state": f.read(g + "/rng_state", "i", ndim=1).astype(np.uint8),
            }


def open_run(path):
    """The run at `path` (a run folder or its run.h5). Raises RunFileError, naming the file
    and the object at fault, when it is missing, foreign, newer or damaged."""
    return Run(path)

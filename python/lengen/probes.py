"""A run's stored probes (`lengen probe`) and attention maps: the Probes object of one
probe run, the attention probe's settings, and the full maps, read tile by tile.

docs/analysis-format.md describes /probes and /intervention_probes in analysis.h5 and the
attention_maps*.h5 files beside it; each is read as LenGen's own readers read them, with the
same refusals of damaged ones. Run (run.py) takes these methods from ProbesMixin.
"""

import math
import os

import numpy as np
import pandas as pd

from . import _h5
from .evaluations import _lines

# Probe groups under /probes (or /intervention_probes/<spec>), each a set of curves.
PROBE_GROUPS = ("duplicated/count_sweep", "duplicated/inst_noise_target",
                "duplicated/instruction_position", "serial_position")
PROBE_MARKS = ("instruction", "noise", "answer", "target", "prefix")


def attention_maps_name(intervention=None):
    """attention_maps.h5, or attention_maps.<spec>.h5 with characters other than letters,
    digits, '=', '.', '-', '_' written as '_' (docs/analysis-format.md)."""
    if not intervention or intervention == "none":
        return "attention_maps.h5"
    safe = "".join(c if (c.isascii() and c.isalnum()) or c in "=.-_" else "_"
                   for c in intervention)
    return "attention_maps.%s.h5" % safe


class ProbesMixin:
    """Run's probes and attention maps. It reads analysis.h5 through the Run's _open_analysis
    and the training length through its _trained_points_at."""

    def _probes(self, intervention):
        root = "probes" if not intervention or intervention == "none" else (
            "intervention_probes/" + intervention)
        f = self._open_analysis()
        if f is None:
            return Probes(self, intervention, [], [], [], {})
        with f:
            curves, spans, summaries, groups = [], [], [], {}
            for gp in PROBE_GROUPS:
                full = root + "/" + gp
                if not f.exists(root) or not f.exists(full):
                    continue
                params = {n: f.attr_value(full, n) for n in f.attr_names(full)}
                for k, v in list(params.items()):
                    if isinstance(v, list) and len(v) == 1:
                        params[k] = v[0]
                groups[gp] = params
                order = _lines(f.attr_str(full, "order", default="", required=False))
                for name in order or f.members(full):
                    c = full + "/" + name
                    cols, n = f.curve_columns(c)
                    curves.append(pd.DataFrame({"probe": gp, "curve": name, "position":
                                                np.arange(n), **cols}))
                    values = {}
                    for attr in f.attr_names(c):
                        if attr == "label":
                            continue
                        v = f.attr_numbers(c, attr)
                        if attr.endswith("_span") and len(v) == 2:
                            start, end = float(v[0]), float(v[1])
                            if not (0 <= start <= end <= n):
                                raise f.error(c + "@" + attr, "lies outside the curve (damaged "
                                              "file)")
                            spans.append({"probe": gp, "curve": name, "mark": attr[:-5],
                                          "start": start, "end": end})
                        elif len(v):
                            values[attr] = float(v[0])
                    trio = sum(k in values for k in ("target_mean", "target_low", "target_high"))
                    if trio not in (0, 3):
                        raise f.error(c, "has only part of target_mean, target_low, target_high "
                                      "(damaged file)")
                    summaries.append(dict({"probe": gp, "curve": name, "length": n,
                                           "mean_over_positions": float(np.mean(cols["mean"]))
                                           if n else math.nan,
                                           "last": float(cols["mean"][-1]) if n else math.nan},
                                          **values))
            attention = self._attention_settings(f, root)
        for gp, params in groups.items():  # stored before they recorded it (issue 52)
            if "trained_points" not in params:
                params["trained_points"] = self._trained_points_at(
                    int(params.get("checkpoint_step", 0)), int(params.get("train_points", 0)))
        return Probes(self, intervention, curves, spans, summaries, groups, attention)

    @property
    def probes(self):
        """The probes stored for the plain model (`lengen probe`): a Probes object."""
        return self._probes(None)

    def probes_under(self, intervention):
        """The probes run under an intervention (`lengen probe --intervention SPEC`)."""
        return self._probes(intervention)

    def probe_interventions(self):
        """The interventions probes were stored under."""
        f = self._open_analysis()
        if f is None:
            return []
        with f:
            return f.members("intervention_probes") if f.exists("intervention_probes") else []

    def _attention_settings(self, f, root):
        rows = []
        base = root + "/attention"
        if not f.exists(root) or not f.exists(base):
            return rows
        for name in f.members(base):
            g = base + "/" + name
            s = {"setting": name}
            for k in ("points", "tokens", "query", "layers", "heads", "prompts", "map_prompts",
                      "checkpoint_step", "seed"):
                s[k] = f.attr_int(g, k, default=0, required=False)
            s["maps_file"] = f.attr_str(g, "maps_file", default="", required=False)
            s["model"] = f.attr_str(g, "model", default="", required=False)
            L, H, T, N = s["layers"], s["heads"], s["tokens"], s["points"]
            sane = L > 0 and H > 0 and N > 0 and T == 2 * N and 0 <= s["query"] < T
            arrays = {}
            for k in ("last_query_mean", "last_query_std", "last_query_low", "last_query_high",
                      "y_attention"):
                if k == "last_query_std" and not f.exists(g + "/" + k):
                    continue
                arrays[k] = f.read(g + "/" + k, "f")
            for k in ("last_query_mean", "last_query_low", "last_query_high", "last_query_std"):
                if k in arrays:
                    sane = sane and arrays[k].size == L * H * T
            sane = sane and arrays["y_attention"].size == L * N
            if not sane:
                raise f.error(g, "its sizes (points, tokens, layers, heads, query) do not match "
                              "its arrays (damaged file)")
            for k, v in arrays.items():
                s[k] = v.reshape((L, H, T) if k.startswith("last_query") else (L, N))
            rows.append(s)
        return rows

    def attention_settings(self, intervention=None):
        """The attention probe's settings (train, long, duplicated, points=<n>), a row each:
        points, tokens, query, layers, heads, prompts, map_prompts, maps_file, and the last
        query's attention (last_query_mean/std/low/high [layers, heads, tokens]) and the
        head-averaged attention on the y tokens (y_attention [layers, points])."""
        return pd.DataFrame(self._probes(intervention).attention_rows)

    def attention(self, layer, head, prompt=0, setting="long", intervention=None):
        """One full attention map (query row, key column), read lazily: an AttentionMap
        whose slices (`m[300:428, 0:128]`) and tiles (`m.tile(r, c)`) read only the
        128 x 128 chunks they cover, as the studio reads them. `layer` -1 is the last."""
        root = "probes" if not intervention or intervention == "none" else (
            "intervention_probes/" + intervention)
        f = self._open_analysis()
        rows = []
        if f is not None:
            with f:
                rows = self._attention_settings(f, root)
        settings = {s["setting"]: s for s in rows}
        if setting not in settings:
            raise KeyError("no attention setting '%s' stored for %s (stored: %s)"
                           % (setting, self.path, ", ".join(settings) or "none"))
        s = settings[setting]
        if layer < 0:
            layer += s["layers"]
        maps = os.path.join(self.folder, s["maps_file"] or attention_maps_name(intervention))
        return AttentionMap(maps, setting, prompt, layer, head, s)


class Probes:
    """A run's stored probes (docs/analysis-format.md, /probes).

    curves: a DataFrame with a row per (probe, curve, position): probe (duplicated/count_sweep,
      duplicated/inst_noise_target, duplicated/instruction_position, serial_position), curve
      (c=5, random, begin, ...), position, mean, std, bootstrap_low, bootstrap_high;
    duplicated, serial_position: the same rows of those probes;
    marks: where each block lies, a row per (probe, curve, mark): start, end (in points);
    summary: a row per curve: its length, mean over positions, last value, and the serial
      position's target block (target_mean, target_low, target_high, answer_distance);
    groups: each probe's attributes (prompts, test_length, dims, zero_estimator, ...);
    attention: the attention probe's settings (Run.attention_settings).
    """

    def __init__(self, run, intervention, curves, spans, summaries, groups, attention=()):
        self.run, self.intervention = run, intervention
        cols = ["probe", "curve", "position", "mean", "std", "bootstrap_low", "bootstrap_high"]
        self.curves = (pd.concat(curves, ignore_index=True) if curves
                       else pd.DataFrame(columns=cols))
        self.marks = pd.DataFrame(spans, columns=["probe", "curve", "mark", "start", "end"])
        self.summary = pd.DataFrame(summaries)
        self.groups = groups
        self.attention_rows = list(attention)
        self.attention = pd.DataFrame(self.attention_rows)

    @property
    def duplicated(self):
        return self.curves[self.curves["probe"].str.startswith("duplicated/")].reset_index(
            drop=True)

    @property
    def serial_position(self):
        return self.curves[self.curves["probe"] == "serial_position"].reset_index(drop=True)

    def __repr__(self):
        return "<lengen.Probes %d curves in %s; attention: %s>" % (
            len(self.summary), ", ".join(self.groups) or "no probe",
            ", ".join(r["setting"] for r in self.attention_rows) or "none")


class AttentionMap:
    """A full attention map [T, T] of one prompt, layer and head (float16 on disk, chunked
    1 x 1 x 1 x 128 x 128): nothing is read until it is sliced.

        m = run.attention(layer=-1, head=0)
        m.shape            # (T, T)
        m[0:128, 0:128]    # one tile, float32
        m.tile(2, 0)       # the tile of rows 256..383, keys 0..127
        np.asarray(m)      # the whole map, read tile by tile
    """

    TILE = 128

    def __init__(self, path, setting, prompt, layer, head, description):
        self.path, self.setting = path, setting
        self.prompt, self.layer, self.head = prompt, layer, head
        self.description = description
        with _h5.File(self.path) as f:
            shape = f.shape(setting + "/maps")
            if len(shape) != 5 or shape[3] != shape[4]:
                raise f.error(setting + "/maps", "has shape %s, not [prompts, layers, heads, T, "
                              "T] (damaged file)" % list(shape))
        self.stored_shape = shape
        inside = (0 <= prompt < shape[0] and 0 <= layer < shape[1] and 0 <= head < shape[2])
        if not inside:
            raise IndexError("prompt %d, layer %d, head %d: %s holds %d prompts, %d layers, %d "
                             "heads" % (prompt, layer, head, path, *shape[:3]))
        self.shape = (shape[3], shape[4])

    def __repr__(self):
        return "<lengen.AttentionMap %s prompt %d layer %d head %d, %d x %d tokens, %s>" % (
            self.setting, self.prompt, self.layer, self.head, *self.shape, self.path)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key, slice(None))
        rows, cols = key
        with _h5.File(self.path) as f:
            return f.read(self.setting + "/maps", "f4",
                          sel=(self.prompt, self.layer, self.head, rows, cols))

    def tile(self, row, col):
        """The 128 x 128 tile in tile row `row`, tile column `col` (cut at the map's edge)."""
        t = self.TILE
        return self[row * t:min((row + 1) * t, self.shape[0]),
                    col * t:min((col + 1) * t, self.shape[1])]

    def tiles(self):
        """(row0, col0, tile) for every tile on or left of the diagonal (the rest is zero)."""
        t = self.TILE
        for r in range(0, self.shape[0], t):
            for c in range(0, min(r + t, self.shape[1]), t):
                yield r, c, self.tile(r // t, c // t)

    def __array__(self, dtype=None):
        out = np.zeros(self.shape, dtype=np.float32)
        for r, c, tile in self.tiles():
            out[r:r + tile.shape[0], c:c + tile.shape[1]] = tile
        return out if dtype is None else out.astype(dtype)


"""A run's stored evaluations (`lengen eval`): the table of them and one evaluation's curves.

docs/analysis-format.md describes /eval, /imported and /interventions in analysis.h5; each is
read as LenGen's own reader reads it (engine readMethod), with the same fallbacks for results
stored before a field existed and the same refusals of damaged ones. Run (run.py) takes these
methods from EvaluationsMixin.
"""

import math

import numpy as np
import pandas as pd

# The methods in the order every front end lists them (engine evalMethodsFor), others after.
_SCALES = ("0.333", "0.5", "2", "3")
METHOD_ORDER = (["standard", "ood_length", "half_subspace", "skewed"]
                + ["scale-x=" + s for s in _SCALES] + ["scale-y=" + s for s in _SCALES])


def _lines(text):
    """The lines of an `order` attribute ([] when it is empty); probes.py reads them too."""
    return [l for l in text.split("\n")] if text else []


def training_position(trained_points, train_points, last):
    """The 0-based position of the training length on a curve whose last position is `last`
    (engine trainingPosition): the last point the weights trained on, clamped to the curve."""
    points = trained_points if trained_points and trained_points > 0 else train_points
    return max(0, min(points - 1, last))


class EvaluationsMixin:
    """Run's evaluations and curves. It reads analysis.h5 through the Run's _open_analysis and
    the training length through its _trained_points_at."""

    def _method(self, f, group, method, label=None, spec=None):
        """One stored evaluation: its attributes and curves (engine readMethod)."""
        g = group + "/" + method

        def count(name, least, default=None):
            if default is not None and not f.has_attr(g, name):
                return default
            return f.attr_int(g, name, least=least, most=100_000_000)

        r = {"method": method, "intervention": spec, "imported": label,
             "source": f.attr_str(g, "source", default="", required=False), "path": g,
             "checkpoint_step": f.attr_int(g, "checkpoint_step", default=0, required=False),
             "prompts": count("prompts", 0, 0), "n_points": count("n_points", 1, 1),
             "train_points": count("train_points", 0, 0),
             "trained_points": count("trained_points", 1) if f.has_attr(g, "trained_points")
             else None, "dims": count("dims", 0, 0)}
        r["seed"] = f.attr_int(g, "seed", default=0, required=False)
        r["zero_estimator"] = (f.attr_numbers(g, "zero_estimator")[0]
                               if f.has_attr(g, "zero_estimator") else float(r["dims"]))
        r["classification"] = bool(f.attr_int(g, "classification", default=0, required=False))
        for k in ("bootstrap_trials", "baselines", "batch_size"):
            r[k] = f.attr_int(g, k, default=None, required=False)
        for k in ("compat", "created_at"):
            r[k] = f.attr_str(g, k, default=None, required=False)
        r["parameters"] = None
        if f.has_attr(g, "intervention"):
            said = f.attr_str(g, "intervention")
            r["parameters"] = f.attr_str(g, "parameters", default="", required=False)
            if not said:
                raise f.error(g + "@intervention", "is empty (damaged file)")
            if spec is not None and said != spec:
                raise f.error(g + "@intervention", "names '%s', stored under '%s' (damaged "
                              "file)" % (said, spec))
        order = _lines(f.attr_str(g, "order", default="", required=False)) or f.members(g)
        curves = []
        for key in order:
            c = g + "/" + key
            cols, n = f.curve_columns(c)
            if n != r["n_points"]:
                raise f.error(c, "has %d positions, n_points says %d (damaged file)"
                              % (n, r["n_points"]))
            curves.append((key, f.attr_str(c, "label", default=key, required=False), cols))
        r["order"] = [k for k, _, _ in curves]
        r["curves"] = curves
        return r

    def _evaluations(self):
        """Every stored evaluation as dicts, in the order `lengen eval --show` lists them:
        LenGen's in method order, imported ones, then those under interventions."""
        f = self._open_analysis()
        if f is None:
            return []
        with f:
            plain, imported, under = [], [], []
            if f.exists("eval"):
                plain = [self._method(f, "eval", m) for m in f.members("eval")]
            if f.exists("imported"):
                for label in f.members("imported"):
                    for m in f.members("imported/" + label):
                        imported.append(self._method(f, "imported/" + label, m, label=label))
            if f.exists("interventions"):
                for spec in f.members("interventions"):
                    for m in f.members("interventions/" + spec):
                        under.append(self._method(f, "interventions/" + spec, m, spec=spec))
        rank = {m: i for i, m in enumerate(METHOD_ORDER)}
        plain.sort(key=lambda r: rank.get(r["method"], len(rank)))
        under.sort(key=lambda r: rank.get(r["method"], len(rank)))  # stable within a spec
        under.sort(key=lambda r: r["intervention"])
        out = plain + imported + under
        for r in out:  # results stored before trained_points existed (engine TrainedLength)
            if r["trained_points"] is None:
                r["trained_points"] = self._trained_points_at(r["checkpoint_step"],
                                                              r["train_points"])
        return out

    def evaluations(self):
        """The stored evaluations, a row each: method, intervention (None for the plain
        model), imported (the label of a reference metrics.json, else None), the prompts,
        lengths and seeds they used, the curves' keys (order, the transformer first), and the
        trained model's error at the training length (at_train, position train_position) and
        at the longest length (at_longest), the numbers `lengen runs` tabulates."""
        rows = []
        for r in self._evaluations():
            row = {k: v for k, v in r.items() if k != "curves"}
            mean = r["curves"][0][2]["mean"] if r["curves"] else np.array([])
            if len(mean):
                last = len(mean) - 1
                pos = training_position(r["trained_points"], r["train_points"], last)
                row.update(train_position=pos, at_train=float(mean[pos]),
                           longest_position=last, at_longest=float(mean[last]))
            else:
                row.update(train_position=None, at_train=math.nan, longest_position=None,
                           at_longest=math.nan)
            row["name"] = r["method"] + ("+" + r["intervention"] if r["intervention"] else "")
            rows.append(row)
        columns = ["name", "method", "intervention", "imported", "checkpoint_step", "prompts",
                   "n_points", "train_points", "trained_points", "dims", "zero_estimator",
                   "classification", "seed", "bootstrap_trials", "baselines", "batch_size",
                   "compat", "source", "created_at", "parameters", "order", "train_position",
                   "at_train", "longest_position", "at_longest", "path"]
        return pd.DataFrame(rows, columns=columns)

    def curve(self, method, intervention=None, imported=None):
        """One stored evaluation's curves: a DataFrame with a row per (curve, position k):
        model (the curve's key: the transformer's display name, baselines by the reference's
        keys), label (its legend), transformer (True for the trained model), k, mean, std,
        bootstrap_low, bootstrap_high (the 5-95 % bootstrap band of the mean).

        `intervention` picks the curve under a training-free extension (its spec as stored),
        `imported` a reference metrics.json's label. The evaluation's attributes (n_points,
        train_points, trained_points, zero_estimator, classification, prompts, ...) are in
        `frame.attrs`.
        """
        group = ("interventions/" + intervention if intervention else
                 "imported/" + imported if imported else "eval")
        r = None
        f = self._open_analysis()
        if f is not None:
            with f:
                if f.exists(group) and method in f.members(group):
                    r = self._method(f, group, method, label=imported, spec=intervention)
        if r is None:
            stored = ", ".join(e["method"] + ("+" + e["intervention"] if e["intervention"] else "")
                               + ("@" + e["imported"] if e["imported"] else "")
                               for e in self._evaluations()) or "none"
            raise KeyError("no evaluation '%s'%s%s stored for %s (stored: %s)" % (
                method, " under " + intervention if intervention else "",
                " imported as " + imported if imported else "", self.path, stored))
        if r["trained_points"] is None:
            r["trained_points"] = self._trained_points_at(r["checkpoint_step"], r["train_points"])
        frames = [pd.DataFrame({"model": key, "label": label,
                                "transformer": i == 0 and not imported,
                                "k": np.arange(len(cols["mean"])), **cols})
                  for i, (key, label, cols) in enumerate(r["curves"])]
        out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
            columns=["model", "label", "transformer", "k", "mean", "std", "bootstrap_low",
                     "bootstrap_high"])
        out.attrs.update({k: v for k, v in r.items() if k != "curves"})
        return out

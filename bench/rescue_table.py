#!/usr/bin/python3
"""docs/results.md's "Rescuing length generalization without retraining" table from a sweep's
aggregate.h5 (docs/sweep-format.md): per (PE, intervention), in the sweep's grid order, the
error at the training length and at the longest position with the band over seeds, the ratio
at the longest position to the untouched model and to the `truncate` baseline of the same PE,
and least squares' error there (exact for noiseless regression from D examples on, so a ratio
to it is undefined and the error itself is the excess over it). Usage:
  bench/rescue_table.py SWEEP/aggregate.h5 [METHOD]   (default ood_length)
"""
import sys

import h5py


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


path = sys.argv[1]
method = sys.argv[2] if len(sys.argv) > 2 else "ood_length"
rows, least_squares = [], {}
with h5py.File(path, "r") as f:
    order = [p for p in text(f.attrs["sets"]).splitlines() if p.startswith(f"eval/{method}/")]
    for set_path in order:
        g = f[set_path]
        axes = dict(l.split("=", 1) for l in text(g.attrs["axes"]).splitlines() if "=" in l)
        k = int(g.attrs["train_points"]) - 1
        m = g["model"]
        mean, low, high = m["mean"][()], m["band_low"][()], m["band_high"][()]
        row = dict(pe=axes.get("pe", "all"), iv=axes.get("intervention", "none"), k=k, last=len(mean) - 1,
                   train=(mean[k], low[k], high[k]), long=(mean[-1], low[-1], high[-1]),
                   seeds=int(m["seeds"][()][-1]))
        rows.append(row)
        for key in g.keys():
            if key.startswith("OLS"):
                least_squares[row["pe"]] = g[key]["mean"][()][-1]


def fmt(v):
    m, lo, hi = v
    return f"{m:.3g} [{lo:.3g}, {hi:.3g}]"


untouched = {r["pe"]: r["long"][0] for r in rows if r["iv"] == "none"}
truncate = {r["pe"]: r["long"][0] for r in rows if r["iv"] == "truncate"}
last = rows[0]["last"]
print(f"| PE | intervention | k = {rows[0]['k']} (train length) | k = {last} (8×) | "
      f"÷ untouched at k = {last} | ÷ truncate at k = {last} | seeds |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    u, t = untouched.get(r["pe"]), truncate.get(r["pe"])
    print(f"| {r['pe']} | {r['iv']} | {fmt(r['train'])} | {fmt(r['long'])} | "
          f"{r['long'][0] / u:.2f} | {r['long'][0] / t:.2f} | {r['seeds']} |" if u and t else
          f"| {r['pe']} | {r['iv']} | {fmt(r['train'])} | {fmt(r['long'])} | — | — | {r['seeds']} |")
if least_squares:
    print(f"\nLeast squares at k = {last}: " +
          ", ".join(f"{pe} {v:.2g}" for pe, v in least_squares.items()))

# The same at a glance: interventions down, PEs across, the error at the longest position
# (mean over seeds [band]); the untouched model's error at the training length first.
pes = list(dict.fromkeys(r["pe"] for r in rows))
ivs = list(dict.fromkeys(r["iv"] for r in rows))
cell = {(r["pe"], r["iv"]): r for r in rows}
print(f"\n| k = {last} (8×) | " + " | ".join(pes) + " |")
print("|---|" + "---|" * len(pes))
print(f"| untouched, k = {rows[0]['k']} (train length) | " +
      " | ".join(fmt(cell[(p, 'none')]["train"]) if (p, "none") in cell else "—" for p in pes) + " |")
for iv in ivs:
    vals = []
    for p in pes:
        r = cell.get((p, iv))
        if not r:
            vals.append("—")
            continue
        best = min(cell[(p, i)]["long"][0] for i in ivs if (p, i) in cell)
        s = fmt(r["long"])
        vals.append(f"**{s}**" if r["long"][0] == best else s)
    print(f"| {'untouched' if iv == 'none' else iv} | " + " | ".join(vals) + " |")

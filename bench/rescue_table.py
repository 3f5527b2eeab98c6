#!/usr/bin/python3
"""The README's "Rescuing length generalization without retraining" table from a sweep's
aggregate.h5 (docs/sweep-format.md): per (PE, intervention) the error at the training length
and at the longest position with the band over seeds, the ratio to the `truncate` baseline of
the same PE and the excess over least squares. Usage:
  bench/rescue_table.py SWEEP/aggregate.h5 [METHOD]   (default ood_length)
"""
import sys

import h5py

path = sys.argv[1]
method = sys.argv[2] if len(sys.argv) > 2 else "ood_length"
rows, plain = [], {}
with h5py.File(path, "r") as f:
    for name, g in f["eval"][method].items():
        axes = dict(line.split("=", 1) for line in g.attrs["axes"].decode().splitlines() if "=" in line) \
            if isinstance(g.attrs["axes"], bytes) else \
            dict(line.split("=", 1) for line in str(g.attrs["axes"]).splitlines() if "=" in line)
        k_train = int(g.attrs["train_points"]) - 1
        model = g["model"]
        mean, low, high = model["mean"][()], model["band_low"][()], model["band_high"][()]
        seeds = model["seeds"][()]
        row = dict(pe=axes.get("pe", "all"), iv=axes.get("intervention", "none"), k=k_train, last=len(mean) - 1,
                   train=(mean[k_train], low[k_train], high[k_train]), long=(mean[-1], low[-1], high[-1]),
                   seeds=int(seeds[-1]))
        rows.append(row)
        if row["iv"] == "none":
            ls = [c for c in g.keys() if c.startswith("OLS")]
            plain[row["pe"]] = dict(ls=g[ls[0]]["mean"][()] if ls else None, row=row)

def fmt(v):
    m, lo, hi = v
    return f"{m:.3g} [{lo:.3g}, {hi:.3g}]"

truncate = {r["pe"]: r["long"][0] for r in rows if r["iv"] == "truncate"}
print(f"| PE | intervention | k = {rows[0]['k']} (train length) | k = {rows[0]['last']} | "
      f"÷ truncate at k = {rows[0]['last']} | − least squares at k = {rows[0]['last']} |")
print("|---|---|---|---|---|---|")
for r in rows:
    t = truncate.get(r["pe"])
    ls = plain.get(r["pe"], {}).get("ls")
    ratio = f"{r['long'][0] / t:.2f}" if t else "—"
    excess = f"{r['long'][0] - ls[-1]:.3g}" if ls is not None else "—"
    print(f"| {r['pe']} | {r['iv']} | {fmt(r['train'])} | {fmt(r['long'])} | {ratio} | {excess} |")

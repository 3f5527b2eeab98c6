#!/usr/bin/env python3
"""Largest difference between the float datasets two HDF5 files share (run.h5 logs, analysis.h5
results): one line per file pair, then the worst datasets. Used by tools/gpu/check.sh to put a
CUDA result beside the CPU result of the same run and seed.

  compare_h5.py A.h5 B.h5 [PREFIX...]   (PREFIX: only datasets under these paths)
"""
import sys

import h5py
import numpy as np


def floats(f, prefixes):
    out = {}
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f" and obj.size and \
                (not prefixes or any(name.startswith(p) for p in prefixes)):
            out[name] = np.asarray(obj[()], dtype=np.float64)
    f.visititems(visit)
    return out


def main():
    a_path, b_path, prefixes = sys.argv[1], sys.argv[2], sys.argv[3:]
    with h5py.File(a_path, "r") as fa, h5py.File(b_path, "r") as fb:
        a, b = floats(fa, prefixes), floats(fb, prefixes)
    rows = []
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if x.shape != y.shape:
            rows.append((float("inf"), name, f"shapes {x.shape} vs {y.shape}"))
            continue
        ok = np.isfinite(x) & np.isfinite(y)
        if (np.isfinite(x) != np.isfinite(y)).any():  # finite in one file only: a divergence
            rows.append((float("inf"), name, "finite in one file, not in the other"))
            continue
        if not ok.any():
            continue
        d = np.abs(x[ok] - y[ok])
        rel = float((d / np.maximum(np.abs(y[ok]), 1e-6)).max())
        rows.append((rel, name, f"max abs {d.max():.3g}, max rel {rel:.3g}"))
    rows.sort(reverse=True)
    worst = rows[0][0] if rows else float("nan")
    print(f"{a_path} vs {b_path}: {len(rows)} datasets, worst relative difference {worst:.3g}")
    for rel, name, text in rows[:5]:
        print(f"  {name}: {text}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The GPU step's device time by kind of kernel (issue 74): reads what `bench_step` prints with
LENGEN_BENCH_TOP=K (K >= 100: whole kernel names), sorts each kernel into one kind by its name,
and prints one JSON line (calls and ms per step for each kind, largest first) and a table.

    kernel_kinds.py PROFILE.txt LABEL [>> results.jsonl]

The kinds follow what docs/gpu.md's profiles name: the matrix products, attention, the
elementwise multiplies/adds (split by element type), casts and strided copies, rotary's neg and
cat, norms, reductions, the optimiser.
"""
import json
import re
import sys

# (kind, pattern): the first match wins; names are PyTorch's, cuBLAS's and cuDNN's kernels.
RULES = [
    ("attention", r"flash|fmha|cudnn|sdpa|attention|generated_attn"),
    ("gemm", r"nvjet|gemm|xmma|cublas|cutlass|sm90_"),
    ("adamw", r"[Aa]dam"),
    ("foreach (clip, norms)", r"multi_tensor_apply|foreach|lpnorm"),
    ("rms_norm", r"rms_norm|[Rr]ms[Nn]orm|rmsnorm"),
    ("rotary (LenGen)", r"rotaryKernel"),
    ("lengen fused", r"addRmsNorm|swiglu|rmsWeight"),
    ("cat", r"CatArrayBatchedCopy|cat_"),
    ("neg", r"neg_kernel|NegFunctor|\bneg\b"),
    ("silu", r"silu"),
    ("mul", r"MulFunctor|mul_kernel|addcmul"),
    ("add", r"AddFunctor|CUDAFunctor_add|add_kernel"),
    ("copy", r"copy"),
    ("reduce", r"reduce_kernel|Reduce"),
    ("index", r"index|gather|scatter|embedding"),
    ("fill", r"fill|FillFunctor"),
]


def kind_of(name):
    for kind, pattern in RULES:
        if re.search(pattern, name):
            if kind in ("mul", "add"):
                return kind + (" bf16" if "BFloat16" in name else " fp32")
            if kind == "copy":
                # Contiguous casts run the vectorised kernel; strided copies (transposes,
                # .contiguous()) the general elementwise one.
                return "copy (cast, contiguous)" if "vectorized" in name else "copy (strided)"
            return kind
    return "other"


def main():
    path, label = sys.argv[1], sys.argv[2]
    head = re.compile(r"profile over (\d+) step\(s\): ([\d.]+) ms wall per step, device busy "
                      r"([\d.]+) ms")
    row = re.compile(r"^\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+(.*)$")
    wall = busy = None
    kinds = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = head.search(line)
            if m:
                wall, busy = float(m.group(2)), float(m.group(3))
                continue
            m = row.match(line)
            if m and wall is not None:
                k = kind_of(m.group(4))
                e = kinds.setdefault(k, {"calls": 0.0, "ms": 0.0})
                e["calls"] += float(m.group(1))
                e["ms"] += float(m.group(2))
    if wall is None:
        print(json.dumps({"kind": "kernel_kinds", "label": label, "error": "no profile"}))
        return 1
    ordered = dict(sorted(((k, {"calls": round(v["calls"], 1), "ms": round(v["ms"], 3)})
                           for k, v in kinds.items()), key=lambda kv: -kv[1]["ms"]))
    print(json.dumps({"kind": "kernel_kinds", "label": label, "wall_ms": wall, "busy_ms": busy,
                      "kinds": ordered}))
    for k, v in ordered.items():
        print(f"#  {k:26s} {v['calls']:8.1f} calls {v['ms']:8.3f} ms  {100 * v['ms'] / busy:5.1f} %",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""An independent check of LenGen's learned relative biases (patch types t5, kerple_log,
kerple_power), each written out here from its paper without LenGen code.

  relative_bias_check.py FIXTURE_JSON

FIXTURE_JSON: {"kind": "t5" | "kerple_log" | "kerple_power", "tokens": T, "bias": [H][T][T]
(LenGen's bias for positions 0..T-1), and the module's parameters: t5: "num_buckets",
"max_distance", "table" [B][H]; kerple: "p" [H], "a" [H] (after LenGen's projection)}.

t5: transformers' T5Attention.compute_bias for a decoder (bidirectional=False), with
transformers' own _relative_position_bucket when it is installed (the PyPI job, .ci/pypi), else
the bucketing of the T5 paper and Mesh TensorFlow written out below. KERPLE (Chi et al. 2022):
log b = -p ln(1 + a n), power b = -a n^p, n = i - j for keys at or before the query.
Prints the oracle and the largest difference; exits 1 when it exceeds the tolerance (0 for the
integer bucketing, 1e-6 relative for KERPLE's float kernels).
"""
import json
import math
import sys

import torch


def t5_buckets(relative_position, num_buckets, max_distance):
    # Causal: only keys at or before the query; n = query - key >= 0.
    n = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    # Half the buckets hold one distance each; the other half are log-spaced up to max_distance,
    # and every farther distance falls in the last bucket.
    log_ratio = torch.log(n.clamp(min=max_exact).float() / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + (log_ratio * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return torch.where(n < max_exact, n, large)


def t5_bias(fx, relative):
    B, D = fx["num_buckets"], fx["max_distance"]
    table = torch.tensor(fx["table"], dtype=torch.float32)              # [B, H]
    try:
        from transformers.models.t5.modeling_t5 import T5Attention
        import transformers
        bucket = T5Attention._relative_position_bucket(relative, bidirectional=False,
                                                       num_buckets=B, max_distance=D)
        oracle = "transformers " + transformers.__version__ + " T5Attention._relative_position_bucket"
    except ImportError:
        bucket = t5_buckets(relative, B, D)
        oracle = "the T5 paper's bucketing (transformers not installed)"
    values = torch.nn.functional.embedding(bucket, table)               # [T, T, H]
    return values.permute(2, 0, 1), oracle, 0.0


def kerple_bias(fx, relative):
    n = (-relative).clamp(min=0).to(torch.float64)                      # [T, T], query - key
    p = torch.tensor(fx["p"], dtype=torch.float64)[:, None, None]       # [H, 1, 1]
    a = torch.tensor(fx["a"], dtype=torch.float64)[:, None, None]
    if fx["kind"] == "kerple_log":
        bias = -p * torch.log(1 + a * n)
    else:
        bias = -a * n.pow(p)
    return bias.float(), "KERPLE's kernels (Chi et al. 2022, eq. for the log and power variants)", 1e-6


def main():
    fx = json.load(open(sys.argv[1]))
    T = fx["tokens"]
    lengen = torch.tensor(fx["bias"], dtype=torch.float32)              # [H, T, T]
    relative = torch.arange(T)[None, :] - torch.arange(T)[:, None]      # key - query, [T, T]
    kind = fx["kind"]
    if kind == "t5":
        expected, oracle, tol = t5_bias(fx, relative)
    elif kind in ("kerple_log", "kerple_power"):
        expected, oracle, tol = kerple_bias(fx, relative)
    else:
        print("unknown kind " + kind)
        sys.exit(2)
    diff = ((expected - lengen).abs() / expected.abs().clamp(min=1)).max().item()
    print(f"{kind} bias over {T} tokens, {lengen.shape[0]} heads; oracle: {oracle}; "
          f"max relative difference {diff:g}")
    sys.exit(0 if diff <= tol else 1)


if __name__ == "__main__":
    main()

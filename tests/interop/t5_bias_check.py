#!/usr/bin/python3
"""An independent check of LenGen's T5 relative position bias (patch type t5).

  t5_bias_check.py FIXTURE_JSON

FIXTURE_JSON: {"num_buckets": B, "max_distance": D, "table": [B][H], "tokens": T,
"bias": [H][T][T]} with LenGen's table and the bias it computed for positions 0..T-1.
The bias is recomputed here as transformers' T5Attention.compute_bias does for a decoder
(bidirectional=False): with transformers' own _relative_position_bucket when transformers is
installed (the PyPI job's environment, .ci/pypi), else with the bucketing written out below
from the T5 paper and Mesh TensorFlow's description (no LenGen code either way). Prints the
oracle and the largest difference; exits 1 when any entry differs.
"""
import json
import math
import sys

import torch


def buckets_from_the_paper(relative_position, num_buckets, max_distance):
    # Causal: only keys at or before the query; n = query - key >= 0.
    n = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    # Half the buckets hold one distance each; the other half are log-spaced up to max_distance,
    # and every farther distance falls in the last bucket.
    log_ratio = torch.log(n.clamp(min=max_exact).float() / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + (log_ratio * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return torch.where(n < max_exact, n, large)


def main():
    fixture = json.load(open(sys.argv[1]))
    B, D, T = fixture["num_buckets"], fixture["max_distance"], fixture["tokens"]
    table = torch.tensor(fixture["table"], dtype=torch.float32)          # [B, H]
    lengen = torch.tensor(fixture["bias"], dtype=torch.float32)          # [H, T, T]
    context = torch.arange(T, dtype=torch.long)[:, None]
    memory = torch.arange(T, dtype=torch.long)[None, :]
    relative = memory - context                                          # [T, T]
    try:
        from transformers.models.t5.modeling_t5 import T5Attention
        import transformers
        bucket = T5Attention._relative_position_bucket(relative, bidirectional=False,
                                                       num_buckets=B, max_distance=D)
        oracle = "transformers " + transformers.__version__ + " T5Attention._relative_position_bucket"
    except ImportError:
        bucket = buckets_from_the_paper(relative, B, D)
        oracle = "the paper's bucketing (transformers not installed)"
    values = torch.nn.functional.embedding(bucket, table)                # [T, T, H]
    expected = values.permute(2, 0, 1)                                   # [H, T, T]
    # Only the causal part is ever used; the masked part must still be bucket 0's row.
    diff = (expected - lengen).abs().max().item()
    print(f"t5 bias over {T} tokens, {B} buckets, max_distance {D}, {table.shape[1]} heads; "
          f"oracle: {oracle}; max |difference| {diff:g}")
    sys.exit(0 if diff == 0 else 1)


if __name__ == "__main__":
    main()

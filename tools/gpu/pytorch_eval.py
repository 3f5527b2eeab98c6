#!/usr/bin/env python3
"""The reference model's forward over the 8x evaluation (prompts of 8 x points.end points) in this
machine's PyTorch, timed: the GPU counterpart of `lengen eval --methods ood_length --no-baselines`.

  pytorch_eval.py RUN_FOLDER PROMPTS BATCH [--compile] [--precision fp32|tf32|bf16]

RUN_FOLDER is what `lengen export-run --format pytorch` writes. Prints seconds, prompts/s and
the peak GPU memory.
"""
import os
import sys
import time

import torch
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "interop"))
from reference_model import InContextModel  # noqa: E402


def main():
    folder, prompts, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    flags = sys.argv[4:]
    precision = flags[flags.index("--precision") + 1] if "--precision" in flags else "fp32"
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    with open(os.path.join(folder, "config.yaml")) as f:
        cfg = yaml.safe_load(f)
    model = InContextModel(cfg)
    state = torch.load(os.path.join(folder, "state.pt"))
    model.load_state_dict(state["model_state_dict"], strict=True)
    model.to("cuda").eval()
    fwd = torch.compile(model) if "--compile" in flags else model
    cur = cfg["task"]["curriculum"]
    n, d = 8 * cur["points"]["end"], cur["dims"]["end"]
    dims = cfg["model"]["n_in_dims"]
    gen = torch.Generator(device="cuda").manual_seed(1)
    def run(count):
        done = 0
        while done < count:
            b = min(batch, count - done)
            xs = torch.randn(b, n, dims, device="cuda", generator=gen)
            xs[..., d:] = 0
            ys = (xs @ torch.randn(b, dims, 1, device="cuda", generator=gen))[..., 0]
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
                fwd(xs, ys).float().cpu()
            done += b
    run(batch)  # warm-up (and compilation)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t = time.perf_counter()
    run(prompts)
    torch.cuda.synchronize()
    s = time.perf_counter() - t
    peak = torch.cuda.max_memory_allocated() / 2**30
    print(f"pytorch eval {prompts} prompts of {n} points (T = {2 * n}), batch {batch}, "
          f"{'compiled' if '--compile' in flags else 'eager'}, {precision}: {s:.2f} s, "
          f"{prompts / s:.1f} prompts/s, peak {peak:.1f} GiB")


if __name__ == "__main__":
    main()

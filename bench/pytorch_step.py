#!/usr/bin/python3
"""The training step of the reference's models in plain PyTorch, timed the way bench_step times
LenGen's: sample a prompt batch, forward, MSE loss, backward, clip the gradient norm, AdamW.

  pytorch_step.py RUN_FOLDER STEPS THREADS POINTS DIMS [--device cuda] [--compile]
                  [--precision fp32|tf32|bf16] [--profile FILE]

--device cuda: on a GPU (batches sampled there); --compile: torch.compile (inductor) of the
model; --precision: TF32 matrix products, or bf16 autocast of the forward; --profile: the timed
steps under torch.profiler, its table of kernels by total device time written to FILE.

RUN_FOLDER is what `lengen export-run --format pytorch` writes (config.yaml + state.pt; without
state.pt the model keeps its random initialisation): the same
weights and config as the LenGen run bench_step loads, so the first line printed, the loss of
both models on one fixed batch (fixed_batch below, the same formula as bench_step's), is a second
check of the math. The models are tests/interop/reference_model.py, written from the spec.
Set OPENBLAS_NUM_THREADS before starting Python (bench/vs_pytorch.sh does).
"""
import contextlib
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
from reference_model import InContextModel  # noqa: E402


def fixed_batch(b, n, d, dims):
    """xs[i,j,k] = sin(1 + 0.37 i + 1.31 j + 2.17 k) for k < dims (else 0), w[i,k] =
    cos(0.5 + 0.71 i + 1.9 k), ys = sum_k xs w; computed in double, stored as float32."""
    i = torch.arange(b, dtype=torch.float64)[:, None, None]
    j = torch.arange(n, dtype=torch.float64)[None, :, None]
    k = torch.arange(d, dtype=torch.float64)[None, None, :]
    xs = torch.sin(1 + 0.37 * i + 1.31 * j + 2.17 * k) * (k < dims)
    w = torch.cos(0.5 + 0.71 * i + 1.9 * k)
    ys = (xs * w).sum(-1)
    return xs.float(), ys.float()


def main():
    folder, steps, threads, points, dims = sys.argv[1], *map(int, sys.argv[2:6])
    flags = sys.argv[6:]
    device = flags[flags.index("--device") + 1] if "--device" in flags else "cpu"
    precision = flags[flags.index("--precision") + 1] if "--precision" in flags else "fp32"
    if device == "cpu" and not torch.backends.mkl.is_available():
        torch.set_num_threads(1)  # Debian's: OpenBLAS gets the threads (OPENBLAS_NUM_THREADS)
    elif threads:
        torch.set_num_threads(threads)  # PyPI's wheel: MKL and the ops share Torch's pool
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    # Only bf16 builds an autocast context: a CPU-only PyTorch refuses torch.autocast("cuda").
    bf16 = precision == "bf16"
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    with open(os.path.join(folder, "config.yaml")) as f:
        cfg = yaml.safe_load(f)
    model = InContextModel(cfg)
    # A folder without state.pt (a config alone) keeps the random initialisation: enough to
    # compile and time the shapes (tools/gpu/stage2.sh warms torch.compile's cache that way).
    if os.path.exists(os.path.join(folder, "state.pt")):
        state = torch.load(os.path.join(folder, "state.pt"))
        model.load_state_dict(state["model_state_dict"], strict=True)
    model.to(device)
    step_model = torch.compile(model) if "--compile" in flags else model
    t = cfg["training"]
    # The default implementation for the device (foreach on a GPU): PyTorch at its best.
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(t["adam_beta1"], t["adam_beta2"]),
                            eps=t["adam_epsilon"], weight_decay=t["weight_decay"])
    batch, n_dims = t["per_device_train_batch_size"], cfg["model"]["n_in_dims"]

    xs, ys = fixed_batch(batch, points, n_dims, dims)
    xs, ys = xs.to(device), ys.to(device)
    with torch.no_grad():
        print(f"loss0 {F.mse_loss(model(xs, ys), ys).item():.9g}")

    warmup = min(20, max(2, steps // 10))
    start = 0.0
    profile_to = flags[flags.index("--profile") + 1] if "--profile" in flags else None
    profiler = contextlib.nullcontext()
    for i in range(-warmup, steps):
        if i == 0:
            if profile_to:
                activities = [torch.profiler.ProfilerActivity.CPU]
                if device != "cpu":
                    activities.append(torch.profiler.ProfilerActivity.CUDA)
                profiler = torch.profiler.profile(activities=activities)
                profiler.__enter__()
            start = time.perf_counter()
        xs = torch.randn(batch, points, n_dims, device=device)
        xs[..., dims:] = 0
        ys = (xs @ torch.randn(batch, n_dims, 1, device=device))[..., 0]
        with autocast:
            pred = step_model(xs, ys)
        loss = F.mse_loss(pred.float(), ys)
        loss.backward()
        loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), t["max_grad_norm"])
        opt.step()
        opt.zero_grad(set_to_none=True)
    if device != "cpu":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"steps/s {steps / elapsed:.3f}")
    if profile_to:
        profiler.__exit__(None, None, None)
        # 2.4 renamed the CUDA columns to device_*.
        key = "self_cuda_time_total" if device != "cpu" else "self_cpu_time_total"
        averages = profiler.key_averages()
        try:
            table = averages.table(sort_by=key.replace("cuda", "device"), row_limit=40)
        except (AttributeError, KeyError, ValueError):
            table = averages.table(sort_by=key, row_limit=40)
        with open(profile_to, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()

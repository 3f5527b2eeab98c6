#!/usr/bin/env bash
# Run ON THE GPU MACHINE after tools/gpu/build.sh: the CUDA checks and measurements of
# docs/gpu.md, one stage per call (each fits the device tool's 10-minute limit).
#   tools/gpu/check.sh BUILD_DIR OUT_DIR functional|timing|eval|graphs|sdpa
# functional: every quick preset trained 100 steps on CUDA and on the CPU (same seed; loss
#   curves side by side), a CUDA run evaluated and probed on both devices (results side by
#   side), checkpoints resumed across devices, and the standard config's first 300 steps on
#   CUDA (fp32, tf32, bf16) beside 150 on the CPU.
# timing: steps/s of the standard model at N = 11, 51, 101, 151, 201 (LenGen fp32/tf32/bf16)
#   and at N = 201 in this machine's PyTorch (eager and torch.compile), and the projected
#   50,000-step run over the curriculum.
# eval: the 8x evaluation (1,280 prompts at T = 3,216) in LenGen and in PyTorch, peak memory.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[[ $# -eq 3 ]] || { echo "usage: check.sh BUILD_DIR OUT_DIR functional|timing|eval|graphs|sdpa" >&2; exit 64; }
build=$1 out=$2 stage=$3
cd "$root"
L=$build/app/cli/lengen B=$build/bench/bench_step py=${PYTHON:-python3}
work=$build/work  # kept between calls while the machine stays warm
mkdir -p "$work" "$out"
std=configs/tasks/linear_regression/rope.yaml
say() { echo "== $(date +%T) $*"; }

# Peak GPU memory (MiB above the idle reading) while a command runs; its output passes through.
peak() {
    local f; f=$(mktemp)
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$f" &
    local smi=$! idle; idle=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)
    "$@"; local rc=$?
    kill $smi 2>/dev/null; wait $smi 2>/dev/null
    echo "   peak GPU memory $(sort -n "$f" | tail -1 | awk -v i="$idle" '{print $1 - i}') MiB (rc $rc)"
    rm -f "$f"
    return $rc
}

runh5() { find "$1" -name run.h5 | head -1; }

# Each quick preset trained 100 steps twice with the same seed, the second with VAR=0; the loss
# curves side by side (graphs against eager, fused attention against written-out).
switch_pair() {  # VAR preset...
    local var=$1 c; shift
    for c in "$@"; do
        local cfg=configs/quick/linear_regression_$c.yaml
        "$L" train "$cfg" --steps 100 --seed 7 --device cuda --out "$work/$var-1-$c" -q >/dev/null
        env "$var=0" "$L" train "$cfg" --steps 100 --seed 7 --device cuda --out "$work/$var-0-$c" -q >/dev/null
        "$py" tools/gpu/compare_h5.py "$(runh5 "$work/$var-1-$c")" "$(runh5 "$work/$var-0-$c")" log/loss | head -1
    done
}

# LenGen's bench_step on RUN, 40 steps after warm-up, per variant "PRECISION N [FUSED=1]".
bench_lengen() {  # run variant...
    local run=$1 v; shift
    for v in "$@"; do
        set -- $v
        LENGEN_FUSED_ATTENTION=${3:-1} LENGEN_BENCH_DEVICE=cuda LENGEN_BENCH_PRECISION=$1 "$B" "$run" 40 4 "$2" |
            awk -v v="$v" '/^loss0/ {l=$2} /^steps\/s/ {printf "   lengen %s: loss0 %s steps/s %s\n", v, l, $2}'
    done
}

# The same model in this machine's PyTorch (bench/pytorch_step.py), per variant
# "N PRECISION [--compile]".
bench_pytorch() {  # exported-run-folder variant...
    local ref=$1 v; shift
    for v in "$@"; do
        set -- $v
        "$py" bench/pytorch_step.py "$ref" 40 4 "$1" 50 --device cuda --precision "$2" ${3:-} 2>&1 |
            awk -v v="$v" '/^loss0/ {l=$2} /^steps\/s/ {printf "   pytorch %s: loss0 %s steps/s %s\n", v, l, $2} /Error/ {print}'
    done
}

# "P N" for every precision P and length N given.
grid() { local p n; for p in $1; do for n in $2; do echo "$p $n"; done; done; }

# Every quick preset: the reference's encodings, the later ones (T5, KERPLE, Sandwich, CoPE
# with its content bias through the fused attention's mask, xPos), Mamba and GPT-2.
presets="rope nope alibi fire t5 kerple_log kerple_power sandwich cope xpos yarn dynamic_yarn pi dynamic_ntk mamba gpt2"

functional() {
    say "device"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    "$L" --version 2>/dev/null | head -1
    # CPU twins in the background (8 threads), GPU runs in the foreground.
    (for c in $presets; do
        "$L" train configs/quick/linear_regression_$c.yaml --steps 100 --seed 7 --device cpu \
            --threads 4 --out "$work/q-cpu-$c" -q || echo "cpu $c failed"
     done
     timeout 300 "$L" train "$std" --steps 150 --seed 7 --device cpu --threads 8 --out "$work/std-cpu" -q ||
        echo "cpu standard failed") >"$work/cpu.log" 2>&1 &
    local cpu=$!
    say "quick presets, 100 steps on CUDA"
    for c in $presets; do
        local t0=$SECONDS
        "$L" train configs/quick/linear_regression_$c.yaml --steps 100 --seed 7 --device cuda \
            --out "$work/q-cuda-$c" -q; echo "   $c: rc $? in $((SECONDS - t0)) s"
    done
    say "standard config, 300 steps on CUDA per precision"
    for p in fp32 tf32 bf16; do
        local t0=$SECONDS
        peak "$L" train "$std" --steps 300 --seed 7 --device cuda --precision $p \
            --out "$work/std-cuda-$p" -q; echo "   $p: $((SECONDS - t0)) s"
    done
    say "eval and probe of a CUDA-trained run on CUDA and on the CPU"
    local run; run=$(runh5 "$work/q-cuda-rope")
    cp -r "$(dirname "$run")" "$work/evcpu"
    "$L" eval "$run" --device cuda --prompts 256 --bootstrap 100 -q; echo "   eval cuda rc $?"
    "$L" probe "$run" --all --device cuda --prompts 20 -q; echo "   probe cuda rc $?"
    "$L" eval "$work/evcpu/run.h5" --device cpu --prompts 256 --bootstrap 100 -q; echo "   eval cpu rc $?"
    "$L" probe "$work/evcpu/run.h5" --all --device cpu --prompts 20 -q; echo "   probe cpu rc $?"
    "$py" tools/gpu/compare_h5.py "$(dirname "$run")/analysis.h5" "$work/evcpu/analysis.h5"
    say "resume across devices (interrupted runs continue on the other device)"
    timeout -s INT 6 "$L" train configs/quick/linear_regression_rope.yaml --steps 100000 --seed 3 \
        --device cuda --out "$work/x-cuda" -q; echo "   cuda part rc $?"
    run=$(runh5 "$work/x-cuda")
    timeout -s INT 6 "$L" train --resume "$run" --device cpu --threads 4 -q; echo "   cpu resume rc $?"
    timeout -s INT 6 "$L" train --resume "$run" --device cuda -q; echo "   cuda resume rc $?"
    "$L" info "$run" | head -12
    wait $cpu; cat "$work/cpu.log"
    say "loss curves, CUDA vs CPU (same config and seed)"
    for c in $presets; do
        "$py" tools/gpu/compare_h5.py "$(runh5 "$work/q-cuda-$c")" "$(runh5 "$work/q-cpu-$c")" log/loss log/pointwise
    done
    for p in fp32 tf32 bf16; do
        "$py" tools/gpu/compare_h5.py "$(runh5 "$work/std-cuda-$p")" "$(runh5 "$work/std-cpu")" log/loss
    done
    "$py" - "$work" <<'PY'
import glob, sys, h5py, numpy as np
work = sys.argv[1]
def loss(pattern):
    f = h5py.File(glob.glob(f"{work}/{pattern}/**/run.h5", recursive=True)[0], "r")
    return f["log/step"][:], f["log/loss"][:]
s, cpu = loss("std-cpu")
print("standard config, loss by step (logged every 10):")
print("step   " + "  ".join(f"{k:>9}" for k in ["cpu", "fp32", "tf32", "bf16"]))
curves = {p: loss(f"std-cuda-{p}") for p in ["fp32", "tf32", "bf16"]}
for i in range(0, len(curves["fp32"][0]), 3):
    step = curves["fp32"][0][i]
    c = f"{cpu[i]:9.4f}" if i < len(cpu) else " " * 9
    print(f"{step:5d}  {c}  " + "  ".join(f"{curves[p][1][i]:9.4f}" for p in curves))
for p, (st, l) in curves.items():
    print(f"{p}: mean loss of steps 200-299 {l[st >= 200].mean():.4f}")
PY
}

# The standard CUDA run of the functional stage, or a new one on a fresh machine.
stdrun() {
    local run; run=$(runh5 "$work/std-cuda-fp32" 2>/dev/null)
    [[ -n $run ]] || { "$L" train "$std" --steps 300 --seed 7 --device cuda --out "$work/std-cuda-fp32" -q;
                       run=$(runh5 "$work/std-cuda-fp32"); }
    echo "$run"
}

timing() {
    say "export the standard CUDA run for PyTorch"
    local run; run=$(stdrun)
    "$L" export-run "$run" --format pytorch --out "$work/std-ref" >/dev/null || echo "export failed"
    local dims; dims=50
    say "LenGen bench_step (standard model)"
    mapfile -t variants < <(grid "fp32 tf32 bf16" "11 51 101 151 201")
    bench_lengen "$run" "${variants[@]}"
    say "PyTorch $("$py" -c 'import torch; print(torch.__version__)') (N = 201 and 51)"
    bench_pytorch "$work/std-ref" "201 fp32" "201 tf32" "201 bf16" "201 fp32 --compile" \
        "201 tf32 --compile" "51 fp32" "51 tf32" "51 bf16" "51 fp32 --compile" "51 tf32 --compile"
}

evaluation() {
    local run; run=$(stdrun)
    [[ -d $work/std-ref ]] || "$L" export-run "$run" --format pytorch --out "$work/std-ref" >/dev/null
    say "LenGen 8x evaluation, model only (1280 prompts, N = 1608, T = 3216)"
    for p in fp32; do
        local t0=$SECONDS
        peak "$L" eval "$run" --device cuda --methods ood_length --prompts 1280 --no-baselines \
            --memory-budget 40000 --force -q
        echo "   lengen eval $p: $((SECONDS - t0)) s (including start-up and writing)"
    done
    "$L" eval "$run" --show --methods ood_length 2>&1 | head -8
    say "PyTorch forward over the same sizes"
    for v in "16" "16 --compile"; do
        "$py" tools/gpu/pytorch_eval.py "$work/std-ref" 1280 $v 2>&1 | tail -2
    done
    say "LenGen eval with baselines"
    local t0=$SECONDS
    "$L" eval "$run" --device cuda --methods ood_length --prompts 1280 --memory-budget 40000 --force -q
    echo "   with baselines: $((SECONDS - t0)) s"
}

# CUDA graphs against the eager GPU path (same seed: curves side by side), then the speed of
# the graphed step, the 8x evaluation and PyTorch, in order of importance (one call).
graphs() {
    say "graphed vs eager training on CUDA (LENGEN_CUDA_GRAPHS=0), same seed"
    switch_pair LENGEN_CUDA_GRAPHS rope alibi fire dynamic_yarn mamba
    local t0=$SECONDS
    peak "$L" train "$std" --steps 300 --seed 7 --device cuda --out "$work/std-graph" -q; echo "   graphed fp32 300 steps: $((SECONDS - t0)) s"
    t0=$SECONDS
    LENGEN_CUDA_GRAPHS=0 "$L" train "$std" --steps 300 --seed 7 --device cuda --out "$work/std-eager" -q; echo "   eager fp32 300 steps: $((SECONDS - t0)) s"
    "$py" tools/gpu/compare_h5.py "$(runh5 "$work/std-graph")" "$(runh5 "$work/std-eager")" log/loss
    local run; run=$(runh5 "$work/std-graph")
    say "LenGen bench_step, graphed (standard model)"
    mapfile -t variants < <(grid "fp32 tf32 bf16" "11 51 101 151 201")
    bench_lengen "$run" "${variants[@]}"
    "$L" export-run "$run" --format pytorch --out "$work/std-ref" >/dev/null
    say "LenGen 8x evaluation, model only (1280 prompts, N = 1608, T = 3216)"
    t0=$SECONDS
    peak "$L" eval "$run" --device cuda --methods ood_length --prompts 1280 --no-baselines --memory-budget 40000 -q
    echo "   lengen eval fp32: $((SECONDS - t0)) s (start-up and writing included)"
    say "PyTorch $("$py" -c 'import torch; print(torch.__version__)') eager"
    mapfile -t variants < <(grid "201 51" "fp32 tf32 bf16")
    bench_pytorch "$work/std-ref" "${variants[@]}"
    "$py" tools/gpu/pytorch_eval.py "$work/std-ref" 1280 16 2>&1 | tail -1
    say "PyTorch torch.compile (N = 201)"
    bench_pytorch "$work/std-ref" "201 tf32 --compile" "201 fp32 --compile"
    "$py" tools/gpu/pytorch_eval.py "$work/std-ref" 1280 16 --compile 2>&1 | tail -1
}

# Fused attention (scaled_dot_product_attention) against the written-out GPU attention
# (LENGEN_FUSED_ATTENTION=0), in one short call: curves, steps/s, the 8x evaluation.
sdpa() {
    say "fused vs written-out attention, 100 steps, same seed"
    switch_pair LENGEN_FUSED_ATTENTION rope alibi fire
    "$L" train "$std" --steps 30 --seed 7 --device cuda --out "$work/s" -q >/dev/null
    local run; run=$(runh5 "$work/s")
    say "bench_step (graphed), standard model"
    bench_lengen "$run" "fp32 201 0" "fp32 201" "tf32 201" "bf16 201" "tf32 51" "bf16 51"
    say "8x evaluation, model only, automatic budget"
    local t0=$SECONDS
    peak "$L" eval "$run" --device cuda --methods ood_length --prompts 1280 --no-baselines -q
    echo "   lengen eval fp32 fused: $((SECONDS - t0)) s"
}

case $stage in
    functional) functional ;;
    timing) timing ;;
    eval) evaluation ;;
    graphs) graphs ;;
    sdpa) sdpa ;;
    *) echo "check.sh: stage functional, timing or eval" >&2; exit 64 ;;
esac

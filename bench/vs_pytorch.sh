#!/usr/bin/env bash
# LenGen's training step against the same model in plain PyTorch (bench/pytorch_step.py), same
# weights, same batch, same threads, alternating and repeated. Prints, per case, both models'
# loss on one fixed batch (a second check of the math), steps/s min/median/max of each, and the
# ratio of the medians.
#
# Usage: bench/vs_pytorch.sh [--rounds R] [--threads T] [--quick-steps S] [--standard-steps S]
#                            [--python PY] [--compile] [CASE...]
#   CASE: a quick preset name (rope nope alibi fire yarn dynamic_yarn pi dynamic_ntk mamba gpt2),
#         `standard` (the reference's linear-regression RoPE model: hidden 256, 16 layers,
#         8 heads, N = 51 so T = 102, batch 64, 2 threads), or `all` (default: every quick
#         preset, then standard). --threads: BLAS threads of the quick cases (default 1); both
#         sides get them, and Torch's own pool one thread (LenGen's policy, threads.cpp).
#   --python: the PyTorch to compare with (default Debian's /usr/bin/python3, PyTorch 1.13;
#         build-pypi/venv/bin/python is PyPI's current one, made by `.ci/pypi --setup`);
#         --compile: its model under torch.compile (inductor; 2.x only).
# Needs the build with -DLENGEN_BUILD_BENCH=ON. LENGEN_BENCH_STEP=path times another bench_step
# binary (a copy kept from before a change: before/after on the same machine).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 quick_steps=300 standard_steps=3 quick_threads=1 python=/usr/bin/python3 compile=
cases=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --threads) quick_threads=$2; shift 2 ;;
        --quick-steps) quick_steps=$2; shift 2 ;;
        --standard-steps) standard_steps=$2; shift 2 ;;
        --python) python=$2; shift 2 ;;
        --compile) compile=--compile; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) cases+=("$1"); shift ;;
    esac
done
[[ ${#cases[@]} -eq 0 || ${cases[0]} == all ]] &&
    cases=(rope nope alibi fire yarn dynamic_yarn pi dynamic_ntk mamba gpt2 standard)
lengen=build/app/cli/lengen bench=${LENGEN_BENCH_STEP:-build/bench/bench_step}
for f in "$lengen" "$bench"; do
    [[ -x $f ]] || { echo "vs_pytorch: $f missing; build with -DLENGEN_BUILD_BENCH=ON" >&2; exit 2; }
done
echo "PyTorch: $("$python" -c 'import torch; print(torch.__version__)')${compile:+ (torch.compile)}"
echo "LenGen:  $("$lengen" --version | tail -1)"
# The machine, and the matrix-product kernels Debian's OpenBLAS picked on it (issue 57).
corename=$(python3 -c 'import ctypes; b = ctypes.CDLL("libopenblas.so.0"); b.openblas_get_corename.restype = ctypes.c_char_p; print(b.openblas_get_corename().decode())' 2>/dev/null || echo unknown)
echo "CPU:     $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores$(grep -q avx512f /proc/cpuinfo && echo ', AVX-512'); OpenBLAS core: $corename"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The matrix-product rate of this machine at the standard size's largest shape, same threads.
matmul_rate() {  # threads
    OPENBLAS_NUM_THREADS=$1 OMP_NUM_THREADS=1 "$python" - "$1" <<'PY'
import sys, time, torch
# Debian's: OpenBLAS takes OPENBLAS_NUM_THREADS; PyPI's MKL takes Torch's pool.
torch.set_num_threads(int(sys.argv[1]) if torch.backends.mkl.is_available() else 1)
a, b = torch.randn(6528, 256), torch.randn(256, 1024)
for _ in range(3): a @ b
t = time.perf_counter(); n = 20
for _ in range(n): a @ b
print(f"{2 * 6528 * 256 * 1024 * n / (time.perf_counter() - t) / 1e9:.1f}")
PY
}

stats() {  # values... -> "min median max"
    printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2;
        printf "%.3g %.3g %.3g", v[1], m, v[NR]}'
}

printf '%-13s %-12s %-12s %-22s %-22s %s\n' case "loss LenGen" "loss PyTorch" \
    "LenGen steps/s" "PyTorch steps/s" "ratio"
for c in "${cases[@]}"; do
    if [[ $c == standard ]]; then
        config=configs/tasks/linear_regression/rope.yaml threads=2 steps=$standard_steps points=51
    else
        config=configs/quick/linear_regression_$c.yaml threads=$quick_threads steps=$quick_steps points=
        [[ -f $config ]] || { echo "vs_pytorch: no quick preset $config" >&2; exit 2; }
    fi
    # One step so the run has a checkpoint, then the same weights as a reference run folder.
    "$lengen" train "$config" --steps 1 --seed 7 --threads "$threads" --out "$tmp/runs-$c" -q >/dev/null 2>&1 ||
        { echo "vs_pytorch: lengen train $config failed" >&2; exit 1; }
    run=$(find "$tmp/runs-$c" -name run.h5 | head -1)
    "$lengen" export-run "$run" --format pytorch --out "$tmp/ref-$c" >/dev/null 2>&1 ||
        { echo "vs_pytorch: lengen export-run failed for $c" >&2; exit 1; }
    dims=$("$python" -c "import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))['task']['curriculum']['dims']['end'])" "$tmp/ref-$c/config.yaml")
    [[ -n $points ]] || points=$("$python" -c "import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))['task']['curriculum']['points']['end'])" "$tmp/ref-$c/config.yaml")
    ours=() theirs=() loss_ours= loss_theirs=
    for ((r = 0; r < rounds; ++r)); do
        out=$(OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=1 "$bench" "$run" "$steps" "$threads" "$points")
        loss_ours=$(awk '/^loss0/ {print $2}' <<<"$out"); ours+=("$(awk '/^steps\/s/ {print $2}' <<<"$out")")
        out=$(OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=1 "$python" bench/pytorch_step.py \
              "$tmp/ref-$c" "$steps" "$threads" "$points" "$dims" $compile)
        loss_theirs=$(awk '/^loss0/ {print $2}' <<<"$out"); theirs+=("$(awk '/^steps\/s/ {print $2}' <<<"$out")")
    done
    read -r omin omed omax <<<"$(stats "${ours[@]}")"
    read -r tmin tmed tmax <<<"$(stats "${theirs[@]}")"
    printf '%-13s %-12s %-12s %-22s %-22s %.2fx\n' "$c" "$loss_ours" "$loss_theirs" \
        "$omin/$omed/$omax" "$tmin/$tmed/$tmax" "$(echo "$omed / $tmed" | bc -l)"
    if [[ $c == standard ]]; then
        rate=$(matmul_rate "$threads")
        # 6 * parameters * tokens per step (16.8 M parameters, 64 prompts of 102 tokens)
        share=$(awk -v s="$omed" -v r="$rate" 'BEGIN {printf "%.0f", 100 * 6 * 16.8e6 * 64 * 102 * s / (r * 1e9)}')
        printf '%-13s matrix products %s GFLOP/s on %s threads; LenGen step at %s%% of it\n' "" \
            "$rate" "$threads" "$share"
    fi
done

#!/usr/bin/env bash
# Run ON THE GPU MACHINE, in one device call (issue 74, the GPU's fourth stage): builds lengen,
# bench_step and bench_kernels (tools/gpu/build.sh) when the build folder lacks them, then, most
# important first, writes each figure as a JSON line to OUT/results.jsonl (a call cut short
# still returns what it measured) and a readable log to stdout:
#   k. bench_kernels: LenGen's device kernels (add + RMSNorm, SwiGLU, rotary) against the ops
#      they replace, values, gradients and times, at the standard size (N = 201);
#   p. the graphed bf16 standard step at N = 201 by kind of kernel (bench_step
#      LENGEN_BENCH_TOP=400, sorted by tools/gpu/kernel_kinds.py), rotary kernel off and on;
#      the whole profiles come back as OUT/profile_*.txt;
#   s. the standard RoPE step (bench_step, graphed) at N = 51, 101, 201 in bf16 and at 201 in
#      tf32, LENGEN_DEVICE_ROTARY=0 and 1 (same batch: equal first losses say the forward agrees);
#   m. members at the standard size: `train --members K` in bf16, K = 1 4 8 (MEMBER_KS), over
#      MEMBER_STEPS (2,000) steps, cell-steps/s and the GPU's peak memory (nvidia-smi every
#      100 ms), and K = 4 separate processes;
#   x. every LenGen device kernel on (LENGEN_DEVICE_ROTARY=1 LENGEN_DEVICE_KERNELS=1): the step
#      at N = 51, 101, 201 in bf16 and 201 in tf32, and the bf16 N = 201 step by kind;
#   c. training through the rotary kernel: the quick RoPE preset, 300 steps on the device in
#      fp32 and bf16, LENGEN_DEVICE_ROTARY=0 against 1: largest relative difference of the
#      logged losses (they drift apart by rounding; fp32 should stay near 1e-5).
#   f. the next batch drawn while the step runs (LENGEN_PREFETCH=0 against 1): the graphed bf16
#      step at N = 51, 101, 201, the N = 201 profile with it on, 2,000 standard steps of a real
#      `lengen train` each way (steps/s; the logged losses must be equal bit for bit), and 8
#      members of the standard config over 1,000 steps each way (cell-steps/s).
#   tools/gpu/stage4.sh OUT [BUILD_DIR=build-gpu] [STAGES=kpsmc]   (issue 74's next call: fsm)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: stage4.sh OUT [BUILD_DIR] [STAGES]} build=${2:-$root/build-gpu} stages=${3:-kpsmc}
cd "$root"
mkdir -p "$out"
py=${PYTHON:-python3} res=$out/results.jsonl work=$build/work4
say() { echo "== $(date +%T) $*"; }
t0=$SECONDS
if [[ ! -x $build/bench/bench_step || ! -x $build/bench/bench_kernels ]]; then
    say "build"
    tools/gpu/build.sh "$build" >/dev/null 2>"$out/build.log" || { tail -30 "$out/build.log"; exit 1; }
fi
echo "{\"kind\": \"build\", \"seconds\": $((SECONDS - t0))}" >>"$res"
L=$build/app/cli/lengen B=$build/bench/bench_step K=$build/bench/bench_kernels
std=configs/tasks/linear_regression/rope.yaml quick=configs/quick/linear_regression_rope.yaml
mkdir -p "$work"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
"$L" --version 2>/dev/null | head -2 | tee -a "$out/device.txt"

# One bench_step run of the standard config: precision N rotary(0|1) [extra env...]
step() {
    local p=$1 n=$2 r=$3 l s
    shift 3
    read -r l s < <(env LENGEN_DEVICE_ROTARY="$r" LENGEN_BENCH_DEVICE=cuda LENGEN_BENCH_PRECISION="$p" \
        "$@" timeout 150 "$B" "$std" 30 4 "$n" 2>&1 | tee "$work/step.log" |
        awk '/^loss0/ {l=$2} /^steps\/s/ {s=$2} END {print l, s}')
    echo "   step $p N=$n rotary=$r: loss0 ${l:-?} steps/s ${s:-failed}"
    echo "{\"kind\": \"step\", \"precision\": \"$p\", \"N\": $n, \"rotary\": $r, \"kernels\": ${LENGEN_DEVICE_KERNELS:-0}, \"prefetch\": ${LENGEN_PREFETCH:-0}, \"loss0\": \"${l:-}\", \"steps_per_s\": \"${s:-}\"}" >>"$res"
}

if [[ $stages == *k* ]]; then
    say "k. device kernels against the ops (bench_kernels, N = 201)"
    timeout 120 "$K" | tee -a "$res"
    echo "{\"kind\": \"device_kernels_check\", \"exit\": ${PIPESTATUS[0]}}" >>"$res"
fi
if [[ $stages == *p* ]]; then
    say "p. the bf16 graphed step at N = 201 by kind of kernel"
    for r in 0 1; do
        LENGEN_BENCH_TOP=400 step bf16 201 $r
        cp "$work/step.log" "$out/profile_bf16_201_rotary$r.txt"
        "$py" tools/gpu/kernel_kinds.py "$out/profile_bf16_201_rotary$r.txt" "bf16 N=201 graphed rotary=$r" >>"$res"
    done
fi
if [[ $stages == *s* ]]; then
    say "s. the standard step, rotary kernel off and on"
    for n in 51 101; do for r in 0 1; do step bf16 $n $r; done; done
    [[ $stages == *p* ]] || for r in 0 1; do step bf16 201 $r; done
    for r in 0 1; do step tf32 201 $r; done
fi
if [[ $stages == *m* ]]; then
    say "m. members at the standard size, bf16, ${MEMBER_STEPS:-2000} steps"
    rate() {  # the sum of the steps_per_s column of the runs under a folder
        "$L" runs "$1" --format csv 2>/dev/null | awk -F, '
            /^run,/ { for (i = 1; i <= NF; ++i) if ($i == "steps_per_s") c = i; next }
            c && NF >= c { s += $c } END { printf "%.1f", s }'
    }
    peak() {  # runs "$@" while sampling the GPU's memory; prints the peak MiB on fd 3
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$work/mem.txt" &
        local smi=$!
        "$@"
        kill $smi 2>/dev/null; wait $smi 2>/dev/null
        sort -n "$work/mem.txt" | tail -1 >&3
    }
    mt=(--steps "${MEMBER_STEPS:-2000}" --device cuda --precision bf16 -q)
    for k in ${MEMBER_KS:-1 4 8}; do
        rm -rf "$work/m$k"
        t=$SECONDS
        mem=$( { peak timeout 150 "$L" train "$std" "${mt[@]}" --members "$k" --seed 1 \
                     --out "$work/m$k" >/dev/null 2>"$work/m$k.err"; } 3>&1)
        echo "   members K=$k: $(rate "$work/m$k") cell-steps/s, $((SECONDS - t)) s, peak ${mem:-?} MiB"
        echo "{\"kind\": \"members_standard\", \"K\": $k, \"steps\": ${MEMBER_STEPS:-2000}, \"cell_steps_per_s\": \"$(rate "$work/m$k")\", \"wall_s\": $((SECONDS - t)), \"peak_mib\": \"${mem:-}\"}" >>"$res"
        tail -2 "$work/m$k.err"
    done
    if [[ ${MEMBER_PROCESSES:-4} -gt 0 ]]; then
        k=${MEMBER_PROCESSES:-4}
        rm -rf "$work/p$k"
        t=$SECONDS
        mem=$( { peak bash -c "for i in \$(seq 1 $k); do timeout 200 '$L' train '$std' ${mt[*]} --seed \$i --out '$work/p$k' >/dev/null 2>&1 & done; wait"; } 3>&1)
        echo "   $k processes: $(rate "$work/p$k") cell-steps/s, $((SECONDS - t)) s, peak ${mem:-?} MiB"
        echo "{\"kind\": \"processes_standard\", \"K\": $k, \"steps\": ${MEMBER_STEPS:-2000}, \"cell_steps_per_s\": \"$(rate "$work/p$k")\", \"wall_s\": $((SECONDS - t)), \"peak_mib\": \"${mem:-}\"}" >>"$res"
    fi
fi
if [[ $stages == *x* ]]; then
    say "x. every LenGen kernel on (rotary, add + RMSNorm, SwiGLU)"
    LENGEN_DEVICE_KERNELS=1 LENGEN_BENCH_TOP=400 step bf16 201 1
    cp "$work/step.log" "$out/profile_bf16_201_all.txt"
    "$py" tools/gpu/kernel_kinds.py "$out/profile_bf16_201_all.txt" "bf16 N=201 graphed all kernels" >>"$res"
    for n in 51 101; do LENGEN_DEVICE_KERNELS=1 step bf16 $n 1; done
    LENGEN_DEVICE_KERNELS=1 step tf32 201 1
fi
if [[ $stages == *f* ]]; then
    say "f. the next batch drawn while the step runs (LENGEN_PREFETCH), bf16"
    for n in 51 101 201; do for f in 0 1; do LENGEN_PREFETCH=$f step bf16 $n 1; done; done
    LENGEN_PREFETCH=1 LENGEN_BENCH_TOP=400 step bf16 201 1
    cp "$work/step.log" "$out/profile_bf16_201_prefetch.txt"
    "$py" tools/gpu/kernel_kinds.py "$out/profile_bf16_201_prefetch.txt" "bf16 N=201 graphed prefetch" >>"$res"
    # A real training, off against on: the same losses bit for bit (tst_training on the CPU).
    for f in 0 1; do
        rm -rf "$work/f$f"
        t=$SECONDS
        LENGEN_PREFETCH=$f timeout 150 "$L" train "$std" --steps 2000 --seed 3 --device cuda \
            --precision bf16 --out "$work/f$f" -q >/dev/null 2>&1 || echo "   train prefetch=$f failed"
        echo "{\"kind\": \"prefetch_train\", \"prefetch\": $f, \"steps\": 2000, \"wall_s\": $((SECONDS - t)), \"steps_per_s\": \"$("$L" runs "$work/f$f" --format csv 2>/dev/null | awk -F, '/^run,/ {for (i = 1; i <= NF; ++i) if ($i == "steps_per_s") c = i; next} c {print $c}')\"}" >>"$res"
    done
    # Members at the standard size, K = 8, 1,000 steps each way: cell-steps/s.
    for f in 0 1; do
        rm -rf "$work/fm$f"
        t=$SECONDS
        LENGEN_PREFETCH=$f timeout 150 "$L" train "$std" --steps 1000 --device cuda --precision bf16 \
            --members 8 --seed 1 --out "$work/fm$f" -q >/dev/null 2>&1 || echo "   members prefetch=$f failed"
        cs=$("$L" runs "$work/fm$f" --format csv 2>/dev/null | awk -F, '/^run,/ {for (i = 1; i <= NF; ++i) if ($i == "steps_per_s") c = i; next} c && NF >= c {s += $c} END {printf "%.1f", s}')
        echo "   members K=8 prefetch=$f: $cs cell-steps/s"
        echo "{\"kind\": \"prefetch_members\", \"prefetch\": $f, \"K\": 8, \"steps\": 1000, \"wall_s\": $((SECONDS - t)), \"cell_steps_per_s\": \"$cs\"}" >>"$res"
    done
    "$py" - "$(find "$work/f0" -name run.h5 | head -1)" "$(find "$work/f1" -name run.h5 | head -1)" <<'PY' | tee -a "$res"
import json, sys
import h5py, numpy as np
with h5py.File(sys.argv[1], "r") as fa, h5py.File(sys.argv[2], "r") as fb:
    x, y = fa["log"]["loss"][:], fb["log"]["loss"][:]
n = min(len(x), len(y))
print(json.dumps({"kind": "prefetch_same_losses", "rows": n,
                  "bitwise_equal": bool(n and np.array_equal(x[:n], y[:n]))}))
PY
fi
if [[ $stages == *c* ]]; then
    say "c. training through the rotary kernel: quick RoPE, 300 steps, off against on"
    for p in fp32 bf16; do
        for r in 0 1; do
            rm -rf "$work/c$p$r"
            LENGEN_DEVICE_ROTARY=$r timeout 120 "$L" train "$quick" --steps 300 --seed 7 --device cuda \
                --precision $p --out "$work/c$p$r" -q >/dev/null 2>&1 || echo "   train $p rotary=$r failed"
        done
        "$py" - "$p" "$(find "$work/c${p}0" -name run.h5 | head -1)" "$(find "$work/c${p}1" -name run.h5 | head -1)" <<'PY' | tee -a "$res"
import json, sys
import h5py, numpy as np
p, a, b = sys.argv[1:4]
with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
    x, y = fa["log"]["loss"][:], fb["log"]["loss"][:]
n = min(len(x), len(y))
rel = float(np.max(np.abs(x[:n] - y[:n]) / np.maximum(np.abs(x[:n]), 1e-30))) if n else None
print(json.dumps({"kind": "rotary_training", "precision": p, "rows": n, "max_rel_loss_diff": rel,
                  "final_loss": [float(x[n - 1]), float(y[n - 1])] if n else None}))
PY
    done
fi
say "done in $((SECONDS - t0)) s"

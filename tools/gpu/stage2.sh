#!/usr/bin/env bash
# Run ON THE GPU MACHINE, in one device call (issue 44's measurements): builds lengen and
# bench_step (tools/gpu/build.sh), then, most important first, writes every figure as a JSON line
# to OUT/results.jsonl (and a readable log to stdout), so that a call cut short still returns
# what it measured:
#   1. the standard step (Llama + RoPE) at N = 51, 101, 201 in fp32, tf32, bf16: LenGen against
#      this machine's PyTorch, eager, and torch.compile at N = 51 and 201 (compiled once in
#      parallel beside the build, so each timed run finds inductor's cache warm);
#   2. cells per GPU: K = 1, 2, 4, 8 bench_step processes at once (and under MPS where the
#      driver offers it), aggregate and per-cell steps/s, at N = $CELLS_N (default 101);
#   3. Mamba and GPT-2 standard steps against PyTorch;
#   4. where the GPU step spends its time: Nsight Systems' kernel summary of bench_step (when
#      nsys exists) and torch.profiler's of the PyTorch step;
#   5. the first 300 steps of the RoPE, Mamba and GPT-2 quick presets, CUDA against the CPU.
#   6. GPT-2 under torch.compile (last: its compiles may take the rest of the call).
#   p. LenGen's own kernels by time (bench_step's LENGEN_BENCH_TOP), graphed and not;
#   l. stage 1's grid for LenGen alone.
#   m. Mamba's parallel scan: bench_scan (the scan alone, loop against parallel, values and
#      gradients) and the standard Mamba step with it and with the loop (LENGEN_PARALLEL_SCAN=0).
#   f. the Device path's fused norms (LibTorch's rms_norm) and bf16 rotary: the standard step
#      with LENGEN_DEVICE_FUSION=0 and 1 (norms only; compare their first losses, same batch),
#      N = 101, 201.
#   c. `lengen sweep run --cells-per-device 2` on the device, plain and with --mps: 4 cells of
#      the quick RoPE preset (1,000 steps, training only), wall time and every cell done.
#   w. (with another stage) torch.compile's first compile of k's shapes, beside the build.
#   k. the standard RoPE step at N = 201, bf16 and tf32: LenGen against eager and compile.
#   r. the first half of a run continued across two device calls (issue 58, item 4): a quick
#      RoPE run stopped by SIGINT with a checkpoint, and the same run uninterrupted, both to
#      OUT (resume_stopped.h5, resume_full.h5); tools/gpu/resume2.sh resumes it in the next call.
#   b. seeds as one batched model (`train --members K`) against K processes on the device
#      (bench/members.sh): the quick preset (1,000 steps, K = 1 2 4 8) and the standard config
#      (100 steps at the curriculum's start, K = 1 2 4).
#   g. CUDA graphs for the members' step and GPT-2 with dropout: checked bitwise against the
#      eager step through the CLI, and GPT-2's step timed with graphs off and on
#      (tools/gpu/graphs.sh).
#   d. the fused device kernels (engine/src/device: residual add + RMSNorm, SwiGLU): bench_kernels
#      against the written-out ops (differences and times), then the standard RoPE step with
#      LENGEN_DEVICE_KERNELS=0 and 1, bf16 and tf32, N = 101, 201.
#   Stages run in the order r d g b 1 2 3 5 4 p l m f c k 6.
#   tools/gpu/stage2.sh OUT [BUILD_DIR] [STAGES=12345]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: stage2.sh OUT [BUILD_DIR] [STAGES]} build=${2:-$root/build-gpu} stages=${3:-12345}
cd "$root"
mkdir -p "$out"
py=${PYTHON:-python3} res=$out/results.jsonl
# The standard runs (20 CUDA steps) and their PyTorch exports, kept while the machine stays warm.
work=$build/work
say() { echo "== $(date +%T) $*"; }
# A JSON line: emit KEY=VALUE... (numbers stay numbers, anything else becomes a string).
emit() {
    "$py" - "$@" >>"$res" <<'PY'
import json, sys
d = {}
for a in sys.argv[1:]:
    k, _, v = a.partition("=")
    try:
        d[k] = float(v) if v not in ("", "nan") else None
    except ValueError:
        d[k] = v
print(json.dumps(d))
PY
}
t0=$SECONDS
compile_warmup() {  # torch.compile's first compile of each shape, all at once (CPU-bound)
    local n p
    for n in 51 201; do for p in fp32 tf32 bf16; do
        timeout 300 "$py" bench/pytorch_step.py "$warmcfg/rope" 3 4 $n 50 --device cuda \
            --precision $p --compile >/dev/null 2>&1 &
    done; done
    timeout 300 "$py" bench/pytorch_step.py "$warmcfg/gpt2" 3 4 101 50 --device cuda \
        --precision fp32 --compile >/dev/null 2>&1 &
}
# Started beside the build: the config alone is enough (compiled graphs do not depend on weights).
# tools/gpu/warm/*/config.yaml are what `lengen export-run` writes for the standard RoPE and
# GPT-2 configs.
warmcfg=$root/tools/gpu/warm warm=0
[[ $stages == *1* && -f $warmcfg/rope/config.yaml ]] && { compile_warmup; warm=1; }
# w: only stage k's two shapes, beside the build, waited for before any timing (so that a later
# call on the warm machine finds inductor's cache filled).
if [[ $stages == *w* && $stages != *1* ]]; then
    for p in bf16 tf32; do
        timeout 400 "$py" bench/pytorch_step.py "$warmcfg/rope" 3 4 201 50 --device cuda \
            --precision $p --compile >/dev/null 2>&1 &
    done
fi
if [[ ! -x $build/bench/bench_step ]]; then
    say "build"
    tools/gpu/build.sh "$build" >/dev/null 2>"$out/build.log" || { tail -30 "$out/build.log"; exit 1; }
fi
emit kind=build seconds=$((SECONDS - t0))
[[ $stages == *w* ]] && { wait; emit kind=compile_warmup seconds=$((SECONDS - t0)); }
L=$build/app/cli/lengen B=$build/bench/bench_step
mkdir -p "$work"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
"$L" --version 2>/dev/null | head -2 | tee -a "$out/device.txt"
# The libraries lengen-core looks symbols up in first (libstdc++ should lead: file_tree.h).
readelf -d "$build/app/cli/lengen-core" | awk '/NEEDED/ {print "needed", $NF}' | head -3 | tee -a "$out/device.txt"
runh5() { find "$1" -name run.h5 | head -1; }

# A 20-step run of a standard config and its PyTorch export: bench_step and pytorch_step load it.
prepare() {  # name config
    [[ -d $work/$1-ref ]] && return
    "$L" train "$2" --steps 20 --seed 7 --device cuda --out "$work/$1" -q >/dev/null ||
        echo "   train $1 failed"
    "$L" export-run "$(runh5 "$work/$1")" --format pytorch --out "$work/$1-ref" >/dev/null ||
        echo "   export $1 failed"
}
# LenGen: model precision N [steps]
lengen() {
    local l s
    read -r l s < <(LENGEN_BENCH_DEVICE=cuda LENGEN_BENCH_PRECISION=$2 timeout 120 "$B" \
        "$(runh5 "$work/$1")" "${4:-30}" 4 "$3" 2>&1 | awk '/^loss0/ {l=$2} /^steps\/s/ {s=$2} END {print l, s}')
    echo "   lengen $1 $2 N=$3: loss0 ${l:-?} steps/s ${s:-failed}"
    emit kind=step impl=lengen model="$1" precision="$2" N="$3" loss0="${l:-}" steps_per_s="${s:-}"
}
# PyTorch: model precision N eager|compile [steps] [timeout]
pytorch() {
    local flag="" l s; [[ $4 == compile ]] && flag=--compile
    read -r l s < <(timeout "${6:-150}" "$py" bench/pytorch_step.py "$work/$1-ref" "${5:-30}" 4 "$3" 50 \
        --device cuda --precision "$2" $flag 2>&1 | awk '/^loss0/ {l=$2} /^steps\/s/ {s=$2} END {print l, s}')
    echo "   pytorch $4 $1 $2 N=$3: loss0 ${l:-?} steps/s ${s:-failed}"
    emit kind=step impl="pytorch-$4" model="$1" precision="$2" N="$3" loss0="${l:-}" steps_per_s="${s:-}"
}

# The standard RoPE step with an environment switch at 0 and at 1 (same batch: compare their
# first losses), bf16 and tf32, N = 101 and 201: toggled VARIABLE LABEL
toggled() {
    local n p v l s
    prepare rope configs/tasks/linear_regression/rope.yaml
    for n in 101 201; do for p in bf16 tf32; do for v in 0 1; do
        read -r l s < <(env "$1=$v" LENGEN_BENCH_DEVICE=cuda LENGEN_BENCH_PRECISION=$p timeout 120 "$B" \
            "$(runh5 "$work/rope")" 30 4 $n 2>&1 | awk '/^loss0/ {l=$2} /^steps\/s/ {s=$2} END {print l, s}')
        echo "   lengen rope $p N=$n $2=$v: loss0 ${l:-?} steps/s ${s:-failed}"
        emit kind=step impl=lengen-$2-$v model=rope precision=$p N=$n loss0="${l:-}" steps_per_s="${s:-}"
    done; done; done
}

if [[ $stages == *r* ]]; then
    say "r. a run stopped on the device, to be continued in the next call"
    rq=(configs/quick/linear_regression_rope.yaml --steps ${RESUME_STEPS:-4000} --seed 5 --device cuda -q)
    rm -rf "$work/resume-stopped" "$work/resume-full"
    "$L" train "${rq[@]}" --out "$work/resume-stopped" &
    p=$!; sleep "${RESUME_STOP_AFTER:-8}"; kill -INT $p; wait $p; rc=$?
    "$L" train "${rq[@]}" --out "$work/resume-full"
    cp "$(runh5 "$work/resume-stopped")" "$out/resume_stopped.h5"
    cp "$(runh5 "$work/resume-full")" "$out/resume_full.h5"
    "$L" info "$out/resume_stopped.h5" | sed -n 3p
    emit kind=resume_first_call exit="$rc"
fi

if [[ $stages == *d* ]]; then
    say "d. the fused device kernels (add + RMSNorm, SwiGLU) against the ops, then in the step"
    timeout 120 "$build/bench/bench_kernels" | tee -a "$res"
    emit kind=device_kernels_check exit="${PIPESTATUS[0]}"
    toggled LENGEN_DEVICE_KERNELS kernels
fi
if [[ $stages == *g* ]]; then
    say "g. what CUDA graphs now hold: members and GPT-2's dropout (tools/gpu/graphs.sh)"
    timeout 200 tools/gpu/graphs.sh "$L" "$B" "$work/graphs" "$res"
fi
if [[ $stages == *b* ]]; then
    say "b. members (one batched model) against processes on the device"
    LENGEN=$L RESULTS=$res KS="1 2 4 8" timeout 200 bench/members.sh 1000 \
        configs/quick/linear_regression_rope.yaml cuda
    LENGEN=$L RESULTS=$res KS="1 2 4" timeout 200 bench/members.sh 100 \
        configs/tasks/linear_regression/rope.yaml cuda
fi

if [[ $stages == *1* ]]; then
    say "1. standard step: LenGen and PyTorch $("$py" -c 'import torch; print(torch.__version__)')"
    prepare rope configs/tasks/linear_regression/rope.yaml
    ((warm)) || { mkdir -p "$work/warm/gpt2"; ln -sfn "$work/rope-ref" "$work/warm/rope"; warmcfg=$work/warm; compile_warmup; }
    wait
    emit kind=compile_warmup seconds=$((SECONDS - t0))
    for n in 51 101 201; do for p in fp32 tf32 bf16; do
        lengen rope $p $n
        pytorch rope $p $n eager
        [[ $n != 101 ]] && pytorch rope $p $n compile
    done; done
fi

if [[ $stages == *2* ]]; then
    cn=${CELLS_N:-101}  # the prompt size of the shared runs (the curriculum starts at 11)
    say "2. cells per GPU (bench_step processes at once, standard RoPE, N = $cn)"
    prepare rope configs/tasks/linear_regression/rope.yaml
    cells() {  # mode K precision
        local k i f=$work/cells-$1-$2-$3 t=$SECONDS
        for ((i = 0; i < $2; ++i)); do
            LENGEN_BENCH_DEVICE=cuda LENGEN_BENCH_PRECISION=$3 timeout 90 "$B" "$(runh5 "$work/rope")" 100 2 "$cn" \
                >"$f.$i" 2>&1 &
        done
        wait
        local rates; rates=$(cat "$f".* | awk '/^steps\/s/ {printf "%s ", $2}')
        local sum; sum=$(echo "$rates" | awk '{s=0; for (i=1;i<=NF;i++) s+=$i; print NF==0 ? "" : s}')
        echo "   $1 K=$2 $3: per cell [$rates] aggregate $sum ($((SECONDS - t)) s)"
        emit kind=cells mode="$1" K="$2" precision="$3" N="$cn" aggregate_steps_per_s="$sum" per_cell="$rates"
    }
    for k in 1 2 4 8; do cells procs $k bf16; done
    for k in 1 4; do cells procs $k fp32; done
    if command -v nvidia-cuda-mps-control >/dev/null; then
        export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
        mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
        if timeout 20 nvidia-cuda-mps-control -d; then
            for k in 2 4 8; do cells mps $k bf16; done
            echo quit | timeout 20 nvidia-cuda-mps-control
        else
            echo "   MPS would not start"; emit kind=cells mode=mps error=start
        fi
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    else
        echo "   no nvidia-cuda-mps-control"; emit kind=cells mode=mps error=absent
    fi
fi

if [[ $stages == *3* ]]; then
    say "3. Mamba and GPT-2 standard steps"
    models=${STAGE3_MODELS:-gpt2 mamba}
    [[ $models == *mamba* ]] && prepare mamba configs/tasks/linear_regression/mamba.yaml
    prepare gpt2 configs/tasks/linear_regression/gpt.yaml
    # GPT-2's dropout (0.1, the standard config) is drawn on the device: the same seed twice
    # must give the same losses, bit for bit.
    for i in 1 2; do
        "$L" train configs/tasks/linear_regression/gpt.yaml --steps 60 --seed 11 --device cuda \
            --out "$work/gpt2-repeat-$i" -q >/dev/null || echo "   gpt2 repeat $i failed"
    done
    "$py" - "$(runh5 "$work/gpt2-repeat-1")" "$(runh5 "$work/gpt2-repeat-2")" "$res" <<'PY'
import json, sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["log/loss"][:] for p in sys.argv[1:3])
same = bool(len(a) == len(b) and np.array_equal(a, b))
print(f"   gpt2 dropout on the device, same seed twice: {len(a)} logged losses, bitwise equal: {same}")
with open(sys.argv[3], "a") as f:
    f.write(json.dumps({"kind": "gpt2_dropout_repeat", "logged": int(len(a)), "bitwise_equal": same,
                        "last": float(a[-1]) if len(a) else None}) + "\n")
PY
    # PyTorch runs Mamba's scan position by position (so did LenGen before stage m): few steps.
    for v in "gpt2 101 20" "mamba 51 8"; do
        [[ $models == *${v%% *}* ]] || continue
        set -- $v
        lengen $1 fp32 $2 $3
        lengen $1 bf16 $2 $3
        pytorch $1 fp32 $2 eager $3
        pytorch $1 bf16 $2 eager $3
    done
    [[ $stages == *6* ]] || pytorch gpt2 fp32 101 compile 20 120
    # Mamba under torch.compile unrolls its per-position loop (minutes of compiling): not timed.
fi

if [[ $stages == *5* ]]; then
    say "5. first 300 steps, CUDA against the CPU (quick presets)"
    for c in rope mamba gpt2; do
        cfg=configs/quick/linear_regression_$c.yaml
        "$L" train "$cfg" --steps 300 --seed 7 --device cpu --threads 4 --out "$work/l-cpu-$c" -q &
        "$L" train "$cfg" --steps 300 --seed 7 --device cuda --out "$work/l-cuda-$c" -q
        wait
        "$py" - "$(runh5 "$work/l-cuda-$c")" "$(runh5 "$work/l-cpu-$c")" "$c" "$res" <<'PY'
import json, sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["log/loss"][:] for p in sys.argv[1:3])
n = min(len(a), len(b))
rel = float(np.max(np.abs(a[:n] - b[:n]) / np.maximum(np.abs(b[:n]), 1e-12)))
print(f"   {sys.argv[3]}: {n} logged losses, largest relative difference {rel:.2e}, "
      f"last cuda {a[n-1]:.5f} cpu {b[n-1]:.5f}")
with open(sys.argv[4], "a") as f:
    f.write(json.dumps({"kind": "loss300", "model": sys.argv[3], "logged": n, "max_rel": rel,
                        "last_cuda": float(a[n-1]), "last_cpu": float(b[n-1])}) + "\n")
PY
    done
fi
if [[ $stages == *4* ]]; then
    say "4. where the step spends its time (standard RoPE, N = 201, bf16)"
    prepare rope configs/tasks/linear_regression/rope.yaml
    if command -v nsys >/dev/null; then
        LENGEN_BENCH_DEVICE=cuda LENGEN_BENCH_PRECISION=bf16 timeout 150 nsys profile -t cuda \
            --cuda-graph-trace=node -o "$work/prof" -f true "$B" "$(runh5 "$work/rope")" 20 4 201 >/dev/null 2>&1
        timeout 90 nsys stats -q -r cuda_gpu_kern_sum -f csv "$work/prof.nsys-rep" 2>/dev/null \
            | head -40 >"$out/nsys_kernels.csv"
        head -25 "$out/nsys_kernels.csv" | cut -c1-200
    else
        echo "   no nsys"; emit kind=profile tool=nsys error=absent
    fi
    timeout 150 "$py" bench/pytorch_step.py "$work/rope-ref" 10 4 201 50 --device cuda --precision bf16 \
        --profile "$out/pytorch_kernels.txt" >/dev/null 2>&1
    head -30 "$out/pytorch_kernels.txt" 2>/dev/null | cut -c1-160
fi

if [[ $stages == *p* ]]; then
    say "p. LenGen's step by kernel (bench_step LENGEN_BENCH_TOP, standard RoPE, N = 201)"
    prepare rope configs/tasks/linear_regression/rope.yaml
    for v in "bf16 1" "bf16 0" "tf32 0" "fp32 0"; do
        set -- $v
        echo "   -- $1, CUDA graphs $2"
        LENGEN_CUDA_GRAPHS=$2 LENGEN_BENCH_TOP=25 LENGEN_BENCH_DEVICE=cuda LENGEN_BENCH_PRECISION=$1 \
            timeout 120 "$B" "$(runh5 "$work/rope")" 30 4 201 2>&1 | grep -vE "^  (sample|forward|backward|optimiser|total) " \
            | tee "$out/lengen_kernels_$1_graphs$2.txt" | cut -c1-150
    done
fi
if [[ $stages == *l* ]]; then  # LenGen alone, stage 1's grid (for a machine's own figures)
    say "l. standard step, LenGen alone"
    prepare rope configs/tasks/linear_regression/rope.yaml
    for n in 51 101 201; do for p in fp32 tf32 bf16; do lengen rope $p $n; done; done
fi
if [[ $stages == *m* ]]; then
    say "m. Mamba's parallel scan on the device"
    for t in 102 202; do
        LENGEN_BENCH_DEVICE=cuda timeout 120 "$build/bench/bench_scan" $t 64 512 16 5 | tee -a "$res"
    done
    prepare mamba configs/tasks/linear_regression/mamba.yaml
    for n in 51 101 201; do for p in fp32 bf16; do
        # The peak of the device's memory in use while it runs (nvidia-smi, every 100 ms).
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$work/peak.txt" &
        smi=$!
        lengen mamba $p $n 10
        kill $smi; wait $smi 2>/dev/null
        mib=$(sort -n "$work/peak.txt" | tail -1)
        echo "   peak device memory: ${mib:-?} MiB"
        emit kind=peak_memory model=mamba precision=$p N=$n mib="${mib:-}"
    done; done
    # The loop it replaces, one length (the loop is slow: few steps).
    for p in fp32 bf16; do
        read -r l s < <(LENGEN_PARALLEL_SCAN=0 LENGEN_BENCH_DEVICE=cuda LENGEN_BENCH_PRECISION=$p timeout 150 "$B" \
            "$(runh5 "$work/mamba")" 6 4 51 2>&1 | awk '/^loss0/ {l=$2} /^steps\/s/ {s=$2} END {print l, s}')
        echo "   lengen mamba $p N=51, scan as a loop: loss0 ${l:-?} steps/s ${s:-failed}"
        emit kind=step impl=lengen-scan-loop model=mamba precision=$p N=51 loss0="${l:-}" steps_per_s="${s:-}"
    done
    # PyTorch's Mamba (its scan a loop, 0.3 steps/s on the H100) was measured on 2026-11-27.
    [[ $stages == *3* || ${MAMBA_PYTORCH:-1} == 0 ]] || { pytorch mamba fp32 51 eager 8; pytorch mamba bf16 51 eager 8; }
fi
if [[ $stages == *f* ]]; then
    say "f. fused norms on the device: LENGEN_DEVICE_FUSION=0 against 1 (standard RoPE)"
    toggled LENGEN_DEVICE_FUSION fusion
fi
if [[ $stages == *c* ]]; then
    say "c. sweep cells per device (4 quick RoPE cells, 1,000 steps)"
    "$L" sweep new configs/quick/linear_regression_rope.yaml --seeds 4 --no-eval \
        --set training.max_steps=1000 --out "$work/sweep-base" -q >/dev/null || echo "   sweep new failed"
    for v in "1 plain" "2 plain" "2 mps"; do
        set -- $v
        rm -rf "$work/sweep-$1-$2"; cp -r "$work/sweep-base" "$work/sweep-$1-$2"
        flags=(--device cuda --cells-per-device "$1" --threads-per-job 2)
        [[ $2 == mps ]] && flags+=(--mps)
        t=$SECONDS
        timeout 240 "$L" sweep run "$work/sweep-$1-$2" "${flags[@]}" -q 2>"$out/sweep-$1-$2.log"
        rc=$? secs=$((SECONDS - t))
        done_cells=$("$L" sweep status "$work/sweep-$1-$2" 2>/dev/null | grep -c " done ")
        echo "   cells-per-device $1 $2: exit $rc, $done_cells of 4 done, $secs s"; tail -2 "$out/sweep-$1-$2.log"
        emit kind=sweep_cells per_device="$1" mode="$2" exit="$rc" done="$done_cells" seconds="$secs"
    done
fi
if [[ $stages == *k* ]]; then  # the fused step beside this machine's PyTorch (after w)
    say "k. standard RoPE N = 201 with the fused norms: LenGen, PyTorch eager and compile"
    prepare rope configs/tasks/linear_regression/rope.yaml
    for p in bf16 tf32; do
        lengen rope $p 201
        pytorch rope $p 201 eager
        pytorch rope $p 201 compile 30 200
    done
fi
if [[ $stages == *6* ]]; then  # last: compiling may take the rest of the call
    say "6. GPT-2 under torch.compile"
    pytorch gpt2 fp32 101 compile 20 150
    pytorch gpt2 bf16 101 compile 20 150
fi
emit kind=done seconds=$((SECONDS - t0))
say "done in $((SECONDS - t0)) s"

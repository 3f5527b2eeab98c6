#!/usr/bin/env bash
# Runs per hour of the local sweep executor: the same cells (the quick RoPE preset, training
# only, STEPS steps each) run one at a time with every core, and N at a time with
# cores / N threads each. Prints both and their ratio. Usage:
#   bench/sweep_throughput.sh [LENGEN] [STEPS] [CELLS]
# (defaults: build/app/cli/lengen, 2000, 4). Run it on an otherwise idle machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lengen=${1:-$root/build/app/cli/lengen}
steps=${2:-2000}
cells=${3:-4}
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() {  # measure NAME JOBS THREADS -> runs/hour of full presets (scaled by steps)
    local dir="$work/$1"
    "$lengen" sweep new "$root/configs/quick/linear_regression_rope.yaml" --seeds "$cells" \
        --set "training.max_steps=$steps" --no-eval --out "$dir" -q >/dev/null
    local t0 t1
    t0=$(date +%s.%N)
    "$lengen" sweep run "$dir" --jobs "$2" --threads-per-job "$3" -q
    t1=$(date +%s.%N)
    /usr/bin/python3 - "$t0" "$t1" "$cells" "$steps" "$1" <<'PY'
import sys
t0, t1, cells, steps, name = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
secs = t1 - t0
print(f"{name:>28}: {cells} cells x {steps} steps in {secs:6.1f} s = "
      f"{cells * steps / secs:6.1f} steps/s = {cells * 3600 / secs:6.1f} cells/h "
      f"({cells * steps * 3600 / secs / 15000:5.2f} quick-preset runs/h at 15000 steps)")
PY
}

echo "machine: $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
measure "jobs 1 x $cores threads" 1 "$cores"
measure "jobs $cores x 1 thread" "$cores" 1

#!/usr/bin/env bash
# Evaluation time per intervention (docs/interventions.md) against the plain evaluation, side
# by side: `lengen eval RUN --methods METHOD --prompts N --no-baselines` alone, then with each
# intervention that applies to the run (--force each time, so nothing is skipped). The plain
# evaluation of every round is timed too: an intervention may not slow it. Usage:
#   bench/interventions.sh RUN [LENGEN] [METHOD] [PROMPTS] [THREADS]
# (defaults: build/app/cli/lengen, ood_length, 1280, 2). Run it on an otherwise idle machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run=${1:?usage: bench/interventions.sh RUN [LENGEN] [METHOD] [PROMPTS] [THREADS]}
lengen=${2:-$root/build/app/cli/lengen}
method=${3:-ood_length}
prompts=${4:-1280}
threads=${5:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy of the run: the benchmark's results never replace the run's own.
if [ -d "$run" ]; then cp "$run/run.h5" "$work/run.h5"; else cp "$run" "$work/run.h5"; fi
names=$("$lengen" eval "$work" --list-interventions)

seconds() {  # seconds ARGS... -> wall time of one evaluation
    local t0 t1
    t0=$(date +%s.%N)
    "$lengen" eval "$work" --methods "$method" --prompts "$prompts" --no-baselines --threads "$threads" \
        --force -q "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    /usr/bin/python3 -c "print(f'{$t1 - $t0:.2f}')"
}

plain=$(seconds)
printf '%-14s %9s %9s %7s\n' intervention seconds plain ratio
printf '%-14s %9s %9s %7s\n' none "$plain" "$plain" 1.00
for name in $names; do
    [ "$name" = none ] && continue
    # Plain and intervention in the same round: the ratio compares like with like. The
    # intervention's run also recomputes the plain method (it is stored before it), so its
    # own cost is the difference.
    p=$(seconds)
    both=$(seconds --intervention "$name")
    /usr/bin/python3 - "$name" "$both" "$p" <<'PY'
import sys
name, both, plain = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
own = max(both - plain, 0.0)
print(f"{name:<14} {own:9.2f} {plain:9.2f} {own / plain:7.2f}")
PY
done

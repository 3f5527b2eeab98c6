#!/usr/bin/env bash
# Seeds trained as one batched model (`lengen train --members K`, issue 58) against K separate
# `lengen train` processes at once: cell-steps per second (the sum over the runs of each run's
# logged steps/s, so start-up is left out) for each K.
#   bench/members.sh [STEPS=600] [CONFIG=configs/quick/linear_regression_rope.yaml] [DEVICE=cpu]
# Environment: KS (default "1 2 4"), THREADS (CPU threads in all, default nproc; K processes
# get THREADS/K each, at least 1), LENGEN (default build/app/cli/lengen), RESULTS (a file to
# append one JSON line per K to).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
L=${LENGEN:-$root/build/app/cli/lengen}
steps=${1:-600} cfg=${2:-$root/configs/quick/linear_regression_rope.yaml} dev=${3:-cpu}
threads=${THREADS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Sum of the steps_per_s column of every run under a folder (found by the header's name).
rate() {
    "$L" runs "$1" --format csv 2>/dev/null | awk -F, '
        /^run,/ { for (i = 1; i <= NF; ++i) if ($i == "steps_per_s") c = i; next }
        c && NF >= c { s += $c } END { printf "%.1f", s }'
}
common=(--steps "$steps" --device "$dev" -q)
echo "members against processes: $(basename "$cfg"), $steps steps, $dev, $threads threads"
for k in ${KS:-1 2 4}; do
    "$L" train "$cfg" "${common[@]}" --members "$k" --seed 1 --threads "$threads" \
        --out "$work/m$k" >/dev/null 2>&1
    per=$((threads / k)); ((per >= 1)) || per=1
    for ((i = 1; i <= k; ++i)); do
        "$L" train "$cfg" "${common[@]}" --seed "$i" --threads "$per" --out "$work/p$k" \
            >/dev/null 2>&1 &
    done
    wait
    m=$(rate "$work/m$k") p=$(rate "$work/p$k")
    echo "K=$k: one batched process $m cell-steps/s, $k processes $p"
    [[ -n ${RESULTS:-} ]] && echo "{\"kind\": \"members\", \"config\": \"$(basename "$cfg")\", \"device\": \"$dev\", \"K\": $k, \"steps\": $steps, \"threads\": $threads, \"members_cell_steps_per_s\": $m, \"processes_cell_steps_per_s\": $p}" >>"$RESULTS"
done

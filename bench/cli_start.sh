#!/usr/bin/env bash
# The start of the commands users type most (issue 82 §1): `lengen runs` on a 10-run folder,
# `lengen --version` and `lengen info RUN` through the launcher (lengen-light: no LibTorch)
# side by side with the same command in lengen-core (what every command cost before: LibTorch
# and its few hundred libraries loaded first). Whole processes, timed from outside by
# farm-bench (the tool library's; /usr/bin/time otherwise): wall seconds and peak memory,
# median of N runs.
# Usage: bench/cli_start.sh [N] [BUILD_DIR]
set -euo pipefail
n=${1:-20}
build=${2:-build}
cli="$build/app/cli"
root=$(mktemp -d /tmp/lengen-start-bench.XXXXXX)
trap 'rm -rf "$root"' EXIT
run=$("$cli/lengen" train "$(dirname "$0")/../tests/support/tiny.yaml" --steps 20 --out "$root/template" \
    --seed 1 --threads 1 -q)
"$cli/lengen" eval "$run" --methods standard --prompts 16 --threads 1 -q >/dev/null 2>&1
for ((i = 0; i < 10; i++)); do  # ten runs: hard links of the one
    mkdir -p "$root/runs/r$i"
    ln "$(dirname "$run")/run.h5" "$root/runs/r$i/run.h5"
    ln "$(dirname "$run")/analysis.h5" "$root/runs/r$i/analysis.h5"
done
"$cli/lengen" runs "$root/runs" >/dev/null  # writes the folder's index: both read it
for args in "runs $root/runs" "--version" "info $run"; do
    echo "== lengen $args  (A: lengen, the launcher; B: lengen-core)"
    if command -v farm-bench >/dev/null; then
        # shellcheck disable=SC2086
        farm-bench -n "$n" --vs "$cli/lengen-core $args" -- "$cli/lengen" $args | tail -n +2
    else
        for exe in lengen lengen-core; do
            # shellcheck disable=SC2086
            /usr/bin/time -f "$exe: %e s %M KB" "$cli/$exe" $args >/dev/null
        done
    fi
done

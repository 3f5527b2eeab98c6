#!/usr/bin/env bash
# The Runs list at research scale (issue 42): N runs (default 10,000) under one folder, made as
# hard links of one small real run (its run.h5 and analysis.h5), listed by `lengen runs`, the
# same engine call (engine::indexRuns) the studio's Runs list makes:
#   1. no index yet: every run file is opened (what the studio did before the index);
#   2. with the index: only stat() per run;
#   3. cold, with the index, after dropping the page cache (needs root; skipped where the
#      kernel refuses);
#   4. one run changed (its notes): that run alone is read again.
# Usage: bench/run_index_bench.sh [N] [BUILD_DIR]   (prints one line per case: the whole command's
# time in s, which includes loading LibTorch, then the listing's own time as --stats reports it)
set -euo pipefail
n=${1:-10000}
build=${2:-build}
lengen="$build/app/cli/lengen"
root=$(mktemp -d /tmp/lengen-index-bench.XXXXXX)
trap 'rm -rf "$root"' EXIT
# One small real run with an evaluation, the template of every run below.
cat > "$root/tiny.yaml" <<'YAML'
model: {family: Llama2, max_length: [14], hidden_size: 16, num_hidden_layers: 2, num_attention_heads: 2}
task:
  data: gaussian
  name: linear_regression
  curriculum:
    dims: {start: 2, end: 3, increment: 1, interval: 10}
    points: {start: 5, end: 7, increment: 2, interval: 10}
training: {learning_rate: 1.0e-3, max_steps: 20, logging_steps: 5, save_steps: 10, per_device_train_batch_size: 8}
YAML
template=$("$lengen" train "$root/tiny.yaml" --out "$root/template" --seed 1 --threads 1 -q)
"$lengen" eval "$template" --methods standard --prompts 16 --threads 1 -q >/dev/null 2>&1
dir=$(dirname "$template")
mkdir -p "$root/runs"
for ((i = 0; i < n; i++)); do
    d="$root/runs/linear_regression/dim_2-3/sweep$((i / 1000))/r$i"
    mkdir -p "$d"
    ln "$dir/run.h5" "$d/run.h5"
    ln "$dir/analysis.h5" "$d/analysis.h5"
done
time_of() {
    local t0=$EPOCHREALTIME
    "$@" >/dev/null 2>"$root/err"
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'
}
echo "runs: $n (hard links of one run with an evaluation)"
echo "no index (every run file opened):  $(time_of "$lengen" runs "$root/runs" --stats) s   $(tail -2 "$root/err" | head -1)"
echo "with the index (warm):             $(time_of "$lengen" runs "$root/runs" --stats) s   $(tail -2 "$root/err" | head -1)"
if sync && echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then
    echo "with the index (cold page cache):  $(time_of "$lengen" runs "$root/runs" --stats) s   $(tail -2 "$root/err" | head -1)"
else
    echo "with the index (cold page cache):  skipped (cannot drop the page cache here)"
fi
# A hard link shares its inode with every other run: give r0 a file of its own first.
r0="$root/runs/linear_regression/dim_2-3/sweep0/r0"
rm "$r0/run.h5" && cp "$dir/run.h5" "$r0/run.h5"
"$lengen" runs "$root/runs" >/dev/null 2>&1
"$lengen" note "$r0" --tags changed >/dev/null 2>&1
echo "one run changed:                   $(time_of "$lengen" runs "$root/runs" --stats) s   $(tail -2 "$root/err" | head -1)"
echo "index file: $(du -h "$root/runs/.lengen-index.json" | cut -f1)"

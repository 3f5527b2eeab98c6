#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz/README.md) for a while and reports what they did.
#   tests/fuzz/run_fuzz.sh [--minutes N] [--jobs J] [--build DIR] [TARGET...]
# TARGET: config, run_file, analysis_file (default: all three, J at a time, J = cores).
# Builds DIR (default build-fuzz) with clang, AddressSanitizer, UBSan and libFuzzer, makes the
# seed corpora (shipped configs; a tiny trained, evaluated and probed run and the reliability
# corpus made from it), then fuzzes each target for N minutes (default 10). Findings (inputs
# that crash, hang, leak an exception other than an engine Error, or trip a sanitizer) are kept
# in DIR/fuzz-findings/TARGET/; inputs that reached new code in DIR/fuzz-corpus/TARGET/, so the
# next run goes on from there. Exit 0 without findings, 1 with, 2 on a setup problem.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
minutes=10 jobs=$(nproc) build="$root/build-fuzz" targets=()
while [ $# -gt 0 ]; do
    case $1 in
        --minutes) minutes=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --build) build=$(realpath -m "$2"); shift 2 ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        config|run_file|analysis_file) targets+=("$1"); shift ;;
        *) echo "run_fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(config run_file analysis_file)
command -v clang++ >/dev/null || { echo "run_fuzz.sh: needs clang (apt-get install clang)" >&2; exit 2; }
py=/usr/bin/python3
"$py" -c "import h5py, numpy" 2>/dev/null || { echo "run_fuzz.sh: needs python3-h5py" >&2; exit 2; }

echo "== building $build (clang, address;undefined, libFuzzer)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON -DLENGEN_BUILD_GUI=OFF \
      "-DLENGEN_SANITIZE=address;undefined" -DLENGEN_FUZZ=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target lengen fuzz_config fuzz_run_file fuzz_analysis_file

# ASan: HDF5 and LibTorch keep global caches that LeakSanitizer would report on every input.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

seeds="$build/fuzz-seeds"
if [ ! -f "$seeds/index.json" ]; then
    echo "== making the seed corpus"
    "$py" "$root/tests/corpus/make_corpus.py" --lengen "$build/app/cli/lengen" --out "$seeds"
fi
seed_dirs() {  # the seed files of one target, one folder each
    local t=$1 d="$build/fuzz-seeds-$1"
    if [ ! -d "$d" ]; then
        mkdir -p "$d"
        "$py" - "$seeds" "$d" "$t" "$root/configs" <<'PY'
import json, os, shutil, sys
seeds, out, target, configs = sys.argv[1:]
kinds = {"config": {"config"}, "run_file": {"run"}, "analysis_file": {"analysis", "maps"}}[target]
n = 0
def take(src):
    global n
    if os.path.isfile(src) and not os.path.islink(src):
        shutil.copyfile(src, os.path.join(out, "%05d-%s" % (n, os.path.basename(src)))); n += 1
for case in json.load(open(os.path.join(seeds, "index.json")))["cases"]:
    if case["kind"] in kinds:
        take(os.path.join(seeds, case["path"]))
if target == "config":
    for dirpath, _, files in os.walk(configs):
        for f in sorted(files):
            if f.endswith(".yaml"):
                take(os.path.join(dirpath, f))
else:
    for name in {"run_file": ["run.h5"], "analysis_file": ["analysis.h5", "attention_maps.h5"]}[target]:
        take(os.path.join(seeds, "good", name))
PY
    fi
    echo "$d"
}

run_one() {
    local t=$1 corpus="$build/fuzz-corpus/$1" findings="$build/fuzz-findings/$1"
    local log="$build/fuzz-logs/$1.log"
    mkdir -p "$corpus" "$findings" "$build/fuzz-logs"
    # fork mode: a finding is saved and fuzzing goes on for the whole time. -timeout 20 s per
    # input counts as a hang; -rss_limit_mb bounds memory (an unbounded allocation is a finding).
    "$build/tests/fuzz/fuzz_$t" "$corpus" "$(seed_dirs "$t")" -fork=1 -ignore_crashes=1 \
        -ignore_timeouts=1 -ignore_ooms=1 -timeout=20 -rss_limit_mb=3072 \
        -max_total_time=$((minutes * 60)) -artifact_prefix="$findings/" -print_final_stats=1 \
        >"$log" 2>&1 || true
}

echo "== fuzzing ${targets[*]} for $minutes min each, $jobs at a time"
pids=()
for t in "${targets[@]}"; do
    run_one "$t" &
    pids+=($!)
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 5; done
done
wait

status=0
printf '\n%-14s %12s %8s %10s %9s\n' target executions exec/s "corpus" findings
for t in "${targets[@]}"; do
    log="$build/fuzz-logs/$t.log"
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')  # fork mode: "#N: cov: …"
    corp=$(ls "$build/fuzz-corpus/$t" | wc -l)
    found=$(ls "$build/fuzz-findings/$t" | wc -l)
    rate=$(( ${execs:-0} / (minutes * 60) ))
    printf '%-14s %12s %8s %10s %9s\n' "$t" "${execs:-?}" "$rate" "$corp" "$found"
    [ "$found" -eq 0 ] || status=1
done
echo "(logs: $build/fuzz-logs; findings: $build/fuzz-findings)"
exit $status

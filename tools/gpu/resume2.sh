#!/usr/bin/env bash
# Run ON THE GPU MACHINE, in the call after `stage2.sh … r` (issue 58, item 4): continues the run
# that the first call stopped with a checkpoint, from the run file that came back through $OUT
# and travels with the working tree, and compares its whole loss curve, bit for bit, with the
# uninterrupted run of the same seed. Builds first when the machine is a fresh one.
#   tools/gpu/resume2.sh DIR_WITH_RESUME_FILES OUT [BUILD_DIR=build-gpu]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:?usage: resume2.sh DIR OUT [BUILD_DIR]} out=${2:?usage} build=${3:-$root/build-gpu}
cd "$root"
mkdir -p "$out"
[[ -x $build/app/cli/lengen ]] || tools/gpu/build.sh "$build" >/dev/null 2>"$out/build.log" || exit 1
L=$build/app/cli/lengen py=${PYTHON:-python3}
w=$(mktemp -d)
cp "$src/resume_stopped.h5" "$w/run.h5"
"$L" info "$w/run.h5" | sed -n 3p
t=$SECONDS
"$L" train --resume "$w/run.h5" -q; rc=$?
echo "resumed: exit $rc in $((SECONDS - t)) s"
cp "$w/run.h5" "$out/resume_continued.h5"
"$py" - "$w/run.h5" "$src/resume_full.h5" <<'PY'
import json, sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    out = {"kind": "resume_across_calls", "datasets": {}}
    # Every logged column (the timings differ, of course); pointwise pads with NaN.
    for k, x in a["log"].items():
        if k in b["log"] and x.dtype.kind in "fiu":
            x, y = x[:], b["log"][k][:]
            out["datasets"][k] = {"rows": [len(x), len(y)],
                                  "bitwise_equal": bool(len(x) == len(y) and np.array_equal(
                                      x, y, equal_nan=x.dtype.kind == "f"))}
    print(json.dumps(out))
PY

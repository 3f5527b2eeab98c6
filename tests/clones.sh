#!/usr/bin/env bash
# The hot loops' clones (issue 57; engine/src/model/cpu_math.h: x86-64-v4, x86-64-v3 and the
# baseline, picked by the CPU at load time): this machine runs one of them, so the others are
# run here on CPUs QEMU emulates, each through tst_fused_layer (fused layers and every kernel
# against the module path and Torch). `max` has AVX2 and FMA but no AVX-512 (QEMU 7.2's TCG):
# the v3 clone; `Nehalem` has SSE4.2 and no AVX: the baseline. Exit 77 (skipped) without
# qemu-x86_64 (Debian's qemu-user), unless LENGEN_REQUIRE_QEMU=1.
# Usage: tests/clones.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: clones.sh BUILD_DIR}
if ! command -v qemu-x86_64 >/dev/null; then
    echo "clones: qemu-x86_64 missing (apt install qemu-user): the v3 and baseline clones untested"
    [ "${LENGEN_REQUIRE_QEMU:-0}" = 1 ] && exit 1
    exit 77
fi
# Every test function but the one that starts threads in a forked child, which QEMU 7.2's user
# mode cannot do (its own assertion fails there); it runs natively in the test job.
mapfile -t functions < <("$build/tests/tst_fused_layer" -functions | sed 's/()$//' |
    grep -vx onednnProductsHoldSignals)
status=0
for cpu in max Nehalem; do
    # QEMU warns of every feature of the named CPU its TCG lacks: noise, not failures.
    out=$(qemu-x86_64 -cpu "$cpu" "$build/tests/tst_fused_layer" "${functions[@]}" 2>&1 |
        grep -v '^qemu-x86_64: warning')
    if grep -q '^Totals: [0-9]* passed, 0 failed' <<<"$out"; then
        echo "clones: $cpu: $(grep '^Totals' <<<"$out")"
    else
        echo "clones: $cpu: tst_fused_layer failed"
        echo "$out" | tail -20
        status=1
    fi
done
exit $status

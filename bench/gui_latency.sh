#!/usr/bin/env bash
# The GUI thread's latency figures (issue 54): the event-loop gaps the latency tests measure,
# raw and the GUI thread's own (less its run-queue wait, tests/support/gap_meter.h), on an idle
# machine and beside LOAD busy-looping processes (default 2). The tests bound the own figure;
# this prints both side by side. Usage: bench/gui_latency.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
load=${LOAD:-2}
run() { QT_QPA_PLATFORM=offscreen "$build/tests/widgets/$1" "$2" 2>&1 | grep -o 'event.loop gaps.*' || echo "$1 $2: no figure"; }
for phase in idle loaded; do
    pids=()
    if [ "$phase" = loaded ]; then
        for _ in $(seq "$load"); do (while :; do :; done) & pids+=($!); done
    fi
    echo "== $phase$([ "$phase" = loaded ] && echo " ($load busy processes beside it)")"
    run tst_panels guiStaysResponsiveWhileTraining
    run tst_panels jobsPanelStaysResponsiveWithFourJobs
    run tst_sweeps_view createRunStopWithoutBlocking
    run tst_studio_jobs staysResponsiveWithTwentyForeignJobs
    [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null || true
done

#!/usr/bin/env bash
# Run ON THE GPU MACHINE (stage g of tools/gpu/stage2.sh; issue 58): the steps that CUDA graphs
# now hold, checked and timed. The machine has no Qt, so the device tests of tst_members and
# tst_training are repeated here through the CLI, comparing loss curves as `lengen export
# --figure loss --format csv` writes them (17 significant digits: equal text is equal bits).
#   1. members (`train --members 3`) graphed against eager: every member's curve bitwise equal;
#      a graphed member against its solo graphed run (different kernels: bmm against mm);
#   2. GPT-2 with dropout graphed against eager, bitwise; the same seed twice graphed, equal;
#   3. GPT-2's standard step at N = 101 with dropout, graphs off and on (bench_step).
#   tools/gpu/graphs.sh LENGEN BENCH_STEP WORK RESULTS
set -uo pipefail
L=$1 B=$2 work=$3 res=$4 dev=${DEVICE:-cuda}
# The configs with every step logged (a curve of every step's loss).
mkdir -p "$work"
logEvery() { "$L" validate "$1" 2>/dev/null | sed 's/^  logging_steps: .*/  logging_steps: 1/'; }
logEvery configs/quick/linear_regression_rope.yaml >"$work/quick.yaml"
# A small GPT-2 with the reference's dropout (0.1 everywhere), its curriculum changing shape.
cat >"$work/gpt.yaml" <<'YAML'
model: {family: GPT2, max_length: [40], n_embd: 64, n_layer: 4, n_head: 4,
        resid_pdrop: 0.1, embd_pdrop: 0.1, attn_pdrop: 0.1}
task:
  data: gaussian
  name: linear_regression
  curriculum:
    dims: {start: 3, end: 5, increment: 1, interval: 20}
    points: {start: 11, end: 19, increment: 4, interval: 20}
training: {learning_rate: 1.0e-4, max_steps: 60, logging_steps: 1, per_device_train_batch_size: 32}
YAML
quick=$work/quick.yaml gpt=$work/gpt.yaml
py=${PYTHON:-python3}
curve() {  # RUN.h5 -> its logged losses, one per line (17 digits: equal text is equal bits)
    "$py" -c 'import sys, h5py; [print(repr(float(v))) for v in h5py.File(sys.argv[1], "r")["log/loss"][:]]' "$1"
}
seedOf() { "$L" info "$1" | sed -n 's/.* seed \([0-9]*\),.*/\1/p'; }
bySeed() {  # FOLDER SEED -> the run file of that seed
    local f
    for f in $(find "$1" -name run.h5); do [[ $(seedOf "$f") == "$2" ]] && echo "$f"; done | head -1
}
same() {  # A B -> "yes" when their curves are the same text
    local a b
    a=$(curve "$1") b=$(curve "$2")
    [[ -n $a && $a == "$b" ]] && echo yes || echo no
}
json() { echo "$1" | tee -a "$res"; }

echo "== 1. members graphed against eager"
rm -rf "$work/mg" "$work/me" "$work/ms"
common=(--steps ${MEMBER_STEPS:-300} --device "$dev" -q --seed 1)
LENGEN_CUDA_GRAPHS=1 "$L" train $quick "${common[@]}" --members 3 --out "$work/mg" >/dev/null 2>&1
LENGEN_CUDA_GRAPHS=0 "$L" train $quick "${common[@]}" --members 3 --out "$work/me" >/dev/null 2>&1
"$L" train $quick --steps ${MEMBER_STEPS:-300} --device "$dev" -q --seed 3 --out "$work/ms" >/dev/null 2>&1
eq=()
for s in 1 2 3; do eq+=("$(same "$(bySeed "$work/mg" $s)" "$(bySeed "$work/me" $s)")"); done
a=$(bySeed "$work/mg" 3) b=$(find "$work/ms" -name run.h5 | head -1)
diff=$("$py" - <(curve "$a") <(curve "$b") <<'PY'
import csv, sys
rows = [[float(v) for v in open(p)] for p in sys.argv[1:3]]
ok = len(rows[0]) == len(rows[1]) and len(rows[0]) > 0
print(max(abs(x - y) / abs(y) for x, y in zip(*rows)) if ok else "nan")
PY
)
json "{\"kind\": \"members_graphs\", \"bitwise_equal_eager\": [\"${eq[0]}\", \"${eq[1]}\", \"${eq[2]}\"], \"member_vs_solo_rel\": \"$diff\"}"

echo "== 2. GPT-2 with dropout graphed against eager"
rm -rf "$work"/gd*
for v in "g1 1 11" "g0 0 11" "g1b 1 11" "g1c 1 12"; do
    set -- $v
    LENGEN_CUDA_GRAPHS=$2 "$L" train $gpt --steps ${GPT_STEPS:-60} --seed $3 --device "$dev" -q \
        --out "$work/gd-$1" >/dev/null 2>&1 || echo "   gpt2 $1 failed"
done
r() { find "$work/gd-$1" -name run.h5 | head -1; }
json "{\"kind\": \"gpt2_dropout_graphs\", \"graphed_equal_eager\": \"$(same "$(r g1)" "$(r g0)")\", \"graphed_twice_equal\": \"$(same "$(r g1)" "$(r g1b)")\", \"other_seed_equal\": \"$(same "$(r g1)" "$(r g1c)")\"}"

echo "== 3. GPT-2 standard step with dropout, N = 101: graphs off and on"
"$L" train configs/tasks/linear_regression/gpt.yaml --steps 20 --seed 7 --device "$dev" --out "$work/gpt2-bench" -q >/dev/null 2>&1
f=$(find "$work/gpt2-bench" -name run.h5 | head -1)
for p in ${PRECISIONS-fp32 bf16}; do for g in 0 1; do
    s=$(LENGEN_CUDA_GRAPHS=$g LENGEN_BENCH_DEVICE=$dev LENGEN_BENCH_PRECISION=$p timeout 90 "$B" \
        "$f" 20 4 101 2>&1 | awk '/^steps\/s/ {print $2}')
    json "{\"kind\": \"step\", \"impl\": \"lengen-graphs-$g\", \"model\": \"gpt2-dropout\", \"precision\": \"$p\", \"N\": 101, \"steps_per_s\": \"${s:-failed}\"}"
done; done

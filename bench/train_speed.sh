#!/usr/bin/env bash
# Training throughput (steps/s) of `lengen train` at the sizes of ../shared/MEASUREMENTS.md,
# with the engine's thread policy and with the library defaults it replaces.
# Usage: bench/train_speed.sh [steps]   (after .ci/build; takes a few minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-150}
lengen=build/app/cli/lengen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_config() {  # name hidden layers heads dims points
    cat > "$tmp/$1.yaml" <<YAML
model: {family: Llama2, max_length: [$((2 * $6))], hidden_size: $2, num_hidden_layers: $3, num_attention_heads: $4}
task: {data: gaussian, name: linear_regression, curriculum: {dims: {start: $5, end: $5, increment: 0, interval: 1000}, points: {start: $6, end: $6, increment: 0, interval: 1000}}}
training: {learning_rate: 1.0e-4, max_steps: $steps, warmup_ratio: 0.0, logging_steps: 10, save_steps: 100000, per_device_train_batch_size: 64}
YAML
}

measure() {  # config label env...
    local config=$1 label=$2
    shift 2
    local start end
    start=$(date +%s.%N)
    env "$@" "$lengen" train "$config" --out "$tmp/runs" --seed 1 -q >/dev/null
    end=$(date +%s.%N)
    printf '%-8s %-34s %6.2f steps/s\n' "$(basename "$config" .yaml)" "$label" \
        "$(echo "$steps / ($end - $start)" | bc -l)"
}

make_config micro 64 2 2 5 11
make_config quick 64 3 2 5 11
make_config tiny 256 2 4 5 21
make_config small 256 4 4 20 51
for c in micro quick tiny small; do
    measure "$tmp/$c.yaml" "engine policy (BLAS=all, torch=1)"
    measure "$tmp/$c.yaml" "library defaults (OMP=2, BLAS=2)" LENGEN_NO_THREAD_POLICY=1
done

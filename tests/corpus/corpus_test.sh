#!/usr/bin/env bash
# CTest entry of the reliability corpus (issue 17): makes the corpus (a few seconds) and runs a
# seeded sample of it through the CLI. Fails on any crash, hang, exit 1 or unnamed file.
#   corpus_test.sh LENGEN SCRATCH [SAMPLE]   (SAMPLE default: $LENGEN_CORPUS_SAMPLE or 120)
# The whole corpus (several thousand runs): tests/corpus/run_corpus.py without --sample.
set -euo pipefail
lengen=$1 scratch=$2 sample=${3:-${LENGEN_CORPUS_SAMPLE:-120}}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
if ! "$py" -c "import h5py, numpy" 2>/dev/null; then
    if [ -n "${LENGEN_REQUIRE_PYTHON_TORCH:-}" ]; then
        echo "python3-h5py is required here (CI installs it)"; exit 1
    fi
    echo "python3-h5py is not installed: skipping the corpus"; exit 77
fi
rm -rf "$scratch"
"$py" "$here/make_corpus.py" --lengen "$lengen" --out "$scratch"
"$py" "$here/run_corpus.py" --lengen "$lengen" --corpus "$scratch" --sample "$sample" \
    --timeout 30 --json "$scratch/outcomes.json"

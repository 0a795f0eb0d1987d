#!/usr/bin/env bash
# The GPU measurements of docs/performance.md ("GPU packing"), in one run on a CUDA machine whose python3 has
# PyTorch and which may have no network, the packages coming from scripts/offline_bundle.sh (OFFLINE_DIR, .offline/,
# built beforehand on a machine with PyPI and copied along with the checkout):
#   1. bf16 TSDAE training against sentence-transformers' own on the same GPU (benchmarks/tsdae_training.py);
#   2. the launcher's GPU memory probe against the peaks nvidia-smi measures, 1.0, 0.5 and 0.25 GPU per trial
#      sharing the GPU, and each sweep's card estimate of its GPU-hours against what its trials recorded
#      (benchmarks/gpu_packing.py).
# Both train all-MiniLM-L6-v2's architecture from random weights (benchmarks/random_init_model.py): the time per step
# and the memory are the real model's. Each step's output goes to OUTPUT_DIR (and to the terminal), with
# nvidia-smi's description of the GPU and the package versions; a step that fails or runs past its limit leaves its
# log and the next one still runs. Not yet run on a GPU: on a CPU, in a virtual environment holding only what the GPU
# image has (a CPython 3.11 bundle), it ran end to end in 134 s, the packing benchmark skipped.
#   scripts/gpu_checks.sh OUTPUT_DIR
# Environment: PYTHON (python3), OFFLINE_DIR (.offline), SITE_DIR (/tmp/sentsweep-offline-site: where the bundle
# is unpacked), TRAINING_LIMIT_S (180), PACKING_LIMIT_S (360).
set -uo pipefail
out=${1:?usage: scripts/gpu_checks.sh OUTPUT_DIR}
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
OFFLINE_DIR=${OFFLINE_DIR:-.offline}
SITE_DIR=${SITE_DIR:-/tmp/sentsweep-offline-site}
mkdir -p "$out" "$SITE_DIR"
started=$(date +%s)
for needed in "$OFFLINE_DIR/site.tar.xz" "$OFFLINE_DIR/minilm/config.json"; do
  [ -f "$needed" ] || { echo "error: $needed not found: run scripts/offline_bundle.sh first" >&2; exit 2; }
done
tar -C "$SITE_DIR" -xJf "$OFFLINE_DIR/site.tar.xz" || exit 2
# the bundle's packages before the image's (its own PyTorch aside), for this shell and every process it starts,
# Ray's workers included; sentsweep from this checkout, installed without its dependencies (its version and commit
# are read from the install, as on a cluster node)
export PYTHONPATH="$SITE_DIR${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
"$PYTHON" -m pip install -q --no-deps --no-index --no-build-isolation -e . > "$out/install.txt" 2>&1 \
  || { cat "$out/install.txt"; exit 2; }
{ nvidia-smi 2>&1 || echo "no nvidia-smi"; "$PYTHON" -m pip list 2>/dev/null; } > "$out/machine.txt"
model=/tmp/sentsweep-minilm-random
"$PYTHON" -m benchmarks.random_init_model "$OFFLINE_DIR/minilm" "$model" > "$out/model.txt" 2>&1 \
  || { cat "$out/model.txt"; exit 2; }
export SENTSWEEP_BENCHMARK_MODEL=$model
timeout "${TRAINING_LIMIT_S:-180}" "$PYTHON" -m benchmarks.run_all --only tsdae_training 2>&1 \
  | tee "$out/tsdae_training.txt"
echo "tsdae_training: exit ${PIPESTATUS[0]}"
timeout "${PACKING_LIMIT_S:-360}" "$PYTHON" -m benchmarks.run_all --only gpu_packing 2>&1 | tee "$out/gpu_packing.txt"
echo "gpu_packing: exit ${PIPESTATUS[0]}"
echo "gpu_checks: $(( $(date +%s) - started )) s"

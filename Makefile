# Two entry points do all set-up on a fresh clone: `make demo` (the main job) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU build of torch first: a bare `torch` would pull several GB of CUDA packages.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

.PHONY: install demo test
install: $(STAMP)

demo: $(STAMP)
	$(PY) sweeps/tsdae_deletion.py --quick

test: $(STAMP)
	$(PY) -m pytest -q tests

# Two entry points do all set-up on a fresh clone: `make demo` (the main job) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# Every package at its version in constraints.txt (the lock every node installs from; README.md says how to update it).
$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU build of torch first: a bare `torch` would pull several GB of CUDA packages.
	$(PY) -m pip install -q --no-compile -c constraints.txt torch
	$(PY) -m pip install -q --no-compile -c constraints.txt -e '.[dev,postgres,mteb,pos]'
	# The installed packages' bytecode, on every core: pip compiles it file by file in one process, most of an
	# install's CPU (24,000 files). A file that does not compile for this Python stays source only, as pip leaves it
	# (torch ships one written for Python 3.12).
	$(PY) -c 'import compileall, sysconfig; compileall.compile_dir(sysconfig.get_path("purelib"), quiet=2, workers=0)'
	touch $(STAMP)

.PHONY: install demo test test-fast docs fault-matrix report benchmarks minilm-report
install: $(STAMP)

demo: $(STAMP)
	$(PY) sweeps/tsdae_deletion.py --quick

# The whole suite, its budget 20 minutes on 2 cores (see docs/performance.md): in TEST_WORKERS processes
# (pytest-xdist), one per core. A third process lets one test's waits on Ray, drivers and servers overlap another's
# work, but costs more CPU than those waits leave (docs/performance.md, "The test suite's time"). Tests are handed
# out one by one, slow ones first; those that share a module's fixture, or name an xdist_group, run on one worker
# (tests/conftest.py). The 15 slowest are listed at the end, and each skipped test with its reason (-rs).
TEST_WORKERS ?= 2
# The project's own modules compiled to bytecode (__pycache__/, ignored by git) before the tests start the hundreds
# of processes that import them: where PYTHONDONTWRITEBYTECODE is set (it is on the machine of docs/performance.md),
# Python writes none, and each of those processes would compile the source again.
COMPILE := $(PY) -m compileall -q -j 0 sentsweep sweeps tests benchmarks examples scripts
DISTRIBUTE := --dist loadgroup --no-loadscope-reorder
PARALLEL := -n $(TEST_WORKERS) $(DISTRIBUTE)
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(COMPILE)
	$(PY) -m pytest -q -rs $(PARALLEL) --durations=15 tests

# Everyday work: every test but those marked slow (they start Ray, an MLflow server or sweeps), its budget 2 minutes
# on 2 cores; `make test` runs all. In FAST_TEST_WORKERS processes: these tests compute rather than wait, so on 2
# cores a third process mostly adds its own collection of the suite.
FAST_TEST_WORKERS ?= 2
test-fast: $(STAMP)
	$(VENV)/bin/ruff check .
	$(COMPILE)
	$(PY) -m pytest -q -n $(FAST_TEST_WORKERS) $(DISTRIBUTE) -m "not slow" --durations=15 tests

# The documentation site (README.md as its home, docs/ as its pages) into sweep_outputs/site/; strict, as the
# tests build it (tests/project/test_docs_site.py): a broken link or a page left out of the navigation fails.
# NO_MKDOCS_2_WARNING: the theme's end-of-life notice off (the switch the notice names; docs/layout.md says why the
# site stays on Material for MkDocs); every other warning still fails the strict build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# Every sweep shape stopped at each point where its driver's state changes, by Ctrl-C and by kill -9, then resumed
# and compared with an uninterrupted run (tests/sweep/test_fault_matrix.py; `make test` runs a subset). The outcome table
# is written to sweep_outputs/fault_matrix.md.
fault-matrix: $(STAMP)
	SENTSWEEP_FAULT_MATRIX=all $(PY) -m pytest -v $(PARALLEL) tests/sweep/test_fault_matrix.py

# The example report under docs/: a quick NM-weight sweep, its runs kept in docs/example_report_runs.csv, then the
# report, as `sentsweep analyze report` writes it (tests/analysis/test_example_report.py writes it again from the CSV and
# compares: without --rerun, `$(PY) scripts/example_report.py` takes seconds).
report: $(STAMP)
	$(PY) scripts/example_report.py --rerun

# docs/mlflow.md's screenshots: a quick nm_weight sweep in a temporary store, its views in MLflow's UI (`mlflow ui`)
# taken in Debian's headless Chromium by the browser test's code (tests/helpers/mlflow_ui.py).
.PHONY: docs-screenshots
docs-screenshots: $(STAMP)
	$(PY) -m tests.helpers.mlflow_ui docs/images

# Speed goals as ratios against references measured in the same run.
benchmarks: $(STAMP)
	$(PY) -m benchmarks.run_all

# docs/minilm_report.md from a real model: all-MiniLM-L6-v2 on the STS benchmark (STS_DIR=...), CPU-sized.
minilm-report: $(STAMP)
	VENV=$(VENV) docs/minilm_report.sh

# The cluster launcher for real, on this machine: cluster-onprem.yaml pointed at 127.0.0.1 (a head reached over SSH
# as a dedicated user), ray up, ray submit of the quick NM sweep, its runs in the head's MLflow server, ray down.
# As root: it sets up the user, an SSH key and an sshd on 127.0.0.1:22 the first time (see scripts/cluster_smoke.sh).
.PHONY: cluster-smoke
cluster-smoke: $(STAMP)
	VENV=$(VENV) bash scripts/cluster_smoke.sh

# slurm/sweep.sbatch for real, on this machine: a one-node SLURM on 127.0.0.1 (munge, slurmctld, slurmd; set up the
# first time, as root), sbatch of the quick NM sweep (its table, every trial FINISHED in MLflow), then the same sweep
# in a job whose time runs out mid-sweep: requeued, it resumes and runs each (configuration, seed) once.
# See scripts/slurm_smoke.sh.
.PHONY: slurm-smoke
slurm-smoke: $(STAMP)
	VENV=$(VENV) bash scripts/slurm_smoke.sh

"""Shared fixtures: the shipped demo data, a tiny random BERT, a real `mlflow server` on 127.0.0.1 and a Ray
for the sweeps that need no Ray of their own, each started once per test session; results computed once per run
of the suite (`computed_once`); and the parallel run of `make test` (pytest-xdist, see `pytest_collection_modifyitems`).
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

import pytest

# PyTorch in one thread, as in Ray's trials (Ray gives a trial of 1 CPU one): the test process, the drivers it starts
# and the trials and workers of a parallel run (make test) share the cores, and PyTorch's threads, one per core in
# each process, then wait on one another (a test encoding with batches of 2: 8 s alone in one thread, 66 s in two
# beside a running sweep, on 2 cores). Set before PyTorch is imported (and before
# tests.helpers.cluster_helpers takes the environment its drivers and nodes start with);
# a value given in the environment is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from tests.helpers.cluster_helpers import ray_token_auth_env  # noqa: E402

if os.environ.get("PYTEST_XDIST_WORKER") and sys.argv[:1] == ["-c"]:
    # A worker of a parallel run runs as `python -c ...`; its main file is pytest's, as in a serial run (`python -m
    # pytest`): MLflow takes a run's source and, once per process, its git tags from it (tests read them).
    sys.argv[0] = str(Path(pytest.__file__).parent / "__main__.py")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# every Ray of the session, in-process or not, with token authentication on (tests/helpers/cluster_helpers.py)
os.environ.update(ray_token_auth_env())

from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR  # noqa: E402

SHARED_STS_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "stsbenchmark"


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from sentsweep.data import read_corpus
    from sentsweep.models import build_tiny_model
    from sentsweep.sweep.launch.launcher import read_corpus_pairs_text

    folder = tmp_path_factory.mktemp("tiny-bert")
    return build_tiny_model(folder, read_corpus(CORPUS_FILE) + read_corpus_pairs_text())


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    """`mlflow server` on 127.0.0.1 with its own SQLite store, shared by the tests that read MLflow's REST API
    (each uses experiments of its own names)."""
    from tests.helpers.cluster_helpers import MlflowServer

    server = MlflowServer(tmp_path_factory.mktemp("mlflow-server"))
    yield server
    server.kill()


@pytest.fixture(scope="session")
def session_ray():
    """The session's Ray (see `shared_ray`), started the first time a test asks for it: a `RayCluster`, whose
    `address` a module-scoped fixture sets as RAY_ADDRESS (`pytest.MonkeyPatch.context()`) for the sweep it runs."""
    from tests.helpers.cluster_helpers import RayCluster

    cluster = RayCluster(head_cpus=2, log_monitor=False)
    yield cluster
    cluster.stop()


@pytest.fixture()
def shared_ray(session_ray, monkeypatch) -> str:
    """The address of one Ray per test session (per worker of a parallel run): a head of 2 CPUs and no GPU, as the
    local Ray a sweep starts by itself on this machine, with a temporary folder of its own. Starting a Ray takes
    from seconds to tens of seconds on 2 cores; a sweep that joins one takes about one.

    RAY_ADDRESS names it for the test: a sweep run in-process joins it (the test's `ray.shutdown()` only
    disconnects); a driver started as a process joins it with `RAY_ENV | {"RAY_ADDRESS": shared_ray}` (a driver
    killed there is Ray's to clean up, as on a cluster: the fault matrix's joined shapes). Tests that kill a node, stop
    a driver's own Ray with it (Ctrl-C to its process group, `kill -9`), or need another Ray (GPUs, other CPUs, a
    setting their trials read from the environment at the time, Ray's own start-up being what is tested), keep a Ray
    of their own.

    It has no log monitor, the process that sends the workers' output to drivers: a sweep's driver takes none
    (`log_to_driver=False`), and that monitor, polling the log files of every worker the session started ten times a
    second, took 37-42 s of CPU per test process in a run of the suite. A failed trial's error still reaches its
    driver, through Ray Tune."""
    import ray

    monkeypatch.setenv("RAY_ADDRESS", session_ray.address)
    yield session_ray.address
    if ray.is_initialized():  # the test's in-process driver, disconnected: the next test joins afresh
        ray.shutdown()


def _drop_terminal_size() -> None:
    """A worker of a parallel run writes to no terminal, as a serial run writing to a pipe: without the COLUMNS and
    LINES the worker comes to have (GNU readline exports the terminal's size), in its environment and in the one its
    drivers start with (`RAY_ENV`); output fitted to COLUMNS would differ from a serial run's."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from tests.helpers.cluster_helpers import RAY_ENV

        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)
            RAY_ENV.pop(name, None)


def _forget_git_tags() -> None:
    """MLflow takes a run's git tags from the process's main file once, at its first run, and keeps them; forgotten,
    the next run gets the tags of the driver it names (`sys.argv`), whichever test ran before in this process (a
    worker of a parallel run runs them in another order than a serial run)."""
    registry = sys.modules.get("mlflow.tracking.context.registry")
    if registry is not None:
        for provider in registry._run_context_provider_registry:
            if type(provider).__name__ == "GitRunContext":
                provider._cache.clear()


def _start_clean() -> None:
    """What a test or a module's fixture starts from, whichever test ran before it in this process."""
    _drop_terminal_size()
    _forget_git_tags()


@pytest.fixture(autouse=True)
def _each_test_starts_clean():
    """Each test starts without a terminal size and with MLflow's git tags forgotten (`_start_clean`)."""
    _start_clean()


@pytest.fixture(scope="module", autouse=True)
def _each_modules_fixtures_start_clean():
    """... and so does a module's fixture (a sweep run once for the module's tests, whose printed link and runs they
    read): autouse, it comes before the module's other fixtures. The one module-scoped fixture that every test has,
    so no reason to keep a module's tests on one worker (`pytest_collection_modifyitems`)."""
    _start_clean()


def _run_root(tmp_path_factory, worker_id: str) -> Path:
    """A folder shared by every worker of this run of the suite (the run's own, not another run's)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


@pytest.fixture(scope="session")
def computed_once(tmp_path_factory, worker_id):
    """`computed_once(key, compute)`: what `compute(folder)` returns, computed once per run of the suite, whichever
    worker of a parallel run asks first (the others wait for it and read its pickled result). `folder` is a new
    folder shared by the run, for what the computation writes; `key` names it (letters, digits, '-', '_').

    For results several tests compare against, e.g. the fault matrix's uninterrupted reference sweeps."""
    from filelock import FileLock

    root = _run_root(tmp_path_factory, worker_id) / "computed-once"
    root.mkdir(exist_ok=True)

    def get(key: str, compute):
        result, folder = root / f"{key}.pickle", root / key
        with FileLock(str(root / f"{key}.lock")):
            if not result.exists():
                folder.mkdir()
                value = compute(folder)
                result.write_bytes(pickle.dumps(value))
                return value
        return pickle.loads(result.read_bytes())

    return get


@pytest.fixture(scope="session")
def worker_id(request) -> str:
    """pytest-xdist's name of this worker ("gw0", ...), "master" outside a parallel run (xdist's own fixture, kept
    for runs with `-p no:xdist`)."""
    return os.environ.get("PYTEST_XDIST_WORKER", "master")


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups
def pytest_collection_modifyitems(config, items):
    """A parallel run (`make test`: pytest-xdist, `--dist loadgroup`) hands out tests one by one, except groups:
    the tests of a module sharing a module-scoped fixture (a sweep run once, a site built once) form one group, so
    that one worker builds it once; a test may name a group of its own (`@pytest.mark.xdist_group("name")`) for
    anything else several tests must share on one worker. The slow tests (the test's mark `slow`) go out first,
    groups before single tests, so that no worker starts a long test while the others have finished."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        shares = info is not None and any(
            definition.scope == "module" for name, definitions in info.name2fixturedefs.items()
            if name != "_each_modules_fixtures_start_clean" for definition in definitions)
        if shares and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    grouped = {id(item) for item in items if item.get_closest_marker("xdist_group")}
    order = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, id(item) not in grouped,
                                 order[id(item)]))
    if config.getvalue("loadgroup"):
        _name_groups_in_node_ids(items)


def _name_groups_in_node_ids(items) -> None:
    """The group of each grouped test at the end of its node id ("...::test@group"), which is what xdist's scheduler
    groups by. pytest-xdist 3.8 writes it to `item._nodeid`, which pytest 9 no longer reads (a node's id is its
    structured `_id`): without this, every test would go out alone. Left to xdist under an older pytest."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:
        return
    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid.rpartition("]")[2]:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


SHARED_INPUTS = dict(corpus=str(CORPUS_FILE), dev_file=str(DEMO_DIR / "sts-dev.csv"),
                     test_file=str(DEMO_DIR / "sts-test.csv"), lr=1e-3, batch_size=8, max_steps=40, eval_steps=10,
                     max_seq_length=32, seed=0)


def typed_trial(config: dict):
    """The typed trial of `config`, its shared inputs (data files, rate, steps) completed with the demo's."""
    from sentsweep.trainables.catalog import resolve_trial

    return resolve_trial(SHARED_INPUTS | config)


@pytest.fixture()
def tsdae_config(tiny_model_dir) -> dict:
    """A complete TSDAE trial config on the tiny model and the demo data."""
    return dict(
        method="tsdae",
        model=str(tiny_model_dir),
        corpus=str(CORPUS_FILE),
        dev_file=str(DEMO_DIR / "sts-dev.csv"),
        test_file=str(DEMO_DIR / "sts-test.csv"),
        eval_format="stsb",
        noise_type="delete",
        noise_ratio=0.6,
        pooling="cls",
        tie_decoder=True,
        lr=1e-3,
        batch_size=8,
        max_steps=40,
        eval_steps=10,
        max_seq_length=32,
        seed=0,
    )

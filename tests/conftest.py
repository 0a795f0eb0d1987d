"""Shared fixtures: the shipped demo data, a tiny random BERT and a real `mlflow server` on 127.0.0.1, each
started once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cluster_helpers import ray_token_auth_env

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# every Ray of the session, in-process or not, with token authentication on (tests/cluster_helpers.py)
os.environ.update(ray_token_auth_env())

from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR  # noqa: E402
from sentsweep.sweep.launcher import read_corpus_pairs_text  # noqa: E402

SHARED_STS_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "stsbenchmark"


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from sentsweep.data import read_corpus
    from sentsweep.models import build_tiny_model

    folder = tmp_path_factory.mktemp("tiny-bert")
    return build_tiny_model(folder, read_corpus(CORPUS_FILE) + read_corpus_pairs_text())


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    """`mlflow server` on 127.0.0.1 with its own SQLite store, shared by the tests that read MLflow's REST API
    (each uses experiments of its own names)."""
    from tests.cluster_helpers import MlflowServer

    server = MlflowServer(tmp_path_factory.mktemp("mlflow-server"))
    yield server
    server.kill()


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

"""A trial's model is logged with every warning that announces a removal (DeprecationWarning,
PendingDeprecationWarning, FutureWarning) an error, so that a deprecation on the way (ours, MLflow's or
sentence-transformers') is seen before a release removes what the logging relies on. Other warnings (MLflow's
UserWarning about its own type hints, on import) stay warnings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.cluster_helpers import PROJECT

pytestmark = pytest.mark.slow  # a process of its own that imports torch, sentence-transformers and MLflow

# The one warning allowed: MLflow's sentence_transformers flavour (3.17) imports the Transformer module from
# `sentence_transformers.models`, which sentence-transformers 5.4 made an alias of
# `sentence_transformers.sentence_transformer.modules` and announces it will remove. When it does, every sweep's
# model logging fails until MLflow imports from the new place; when MLflow does, this allowance must go.
ANNOUNCED_REMOVAL = "Importing from 'sentence_transformers.models' is deprecated"

LOG_WITH_WARNINGS_AS_ERRORS = textwrap.dedent("""
    import json, re, sys, warnings
    from mlflow.tracking import MlflowClient
    from sentsweep.tracking.models import log_trial_model

    uri, folder, announced = sys.argv[1:]
    client = MlflowClient(uri)
    run = client.create_run(client.create_experiment("logging"))
    client.set_terminated(run.info.run_id)
    with warnings.catch_warnings(record=True) as caught:
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.simplefilter("error", category)
        warnings.filterwarnings("always", message=re.escape(announced), category=DeprecationWarning)
        model_id = log_trial_model(uri, run.info.run_id, folder, {"best_sts_dev": 61.5})
    allowed = [[str(w.message), w.filename] for w in caught if w.category is DeprecationWarning]
    print(json.dumps({"model_id": model_id, "allowed": allowed}))
""")


def test_a_trial_model_is_logged_with_deprecations_as_errors_but_the_announced_removal(tmp_path, tiny_model_dir):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    result = subprocess.run([sys.executable, "-c", LOG_WITH_WARNINGS_AS_ERRORS, uri, str(tiny_model_dir),
                             ANNOUNCED_REMOVAL], cwd=PROJECT, capture_output=True, text=True, timeout=600,
                            env=os.environ | {"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(PROJECT)})
    assert result.returncode == 0, result.stderr[-5000:]
    logged = json.loads(result.stdout.splitlines()[-1])
    assert logged["model_id"].startswith("m-")
    (allowed,) = logged["allowed"]  # raised once, from MLflow's flavour; when it is gone, remove its allowance
    assert allowed[0].startswith(ANNOUNCED_REMOVAL) and allowed[1].endswith("mlflow/sentence_transformers/__init__.py")

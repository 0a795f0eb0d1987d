"""A trial's model is logged carrying the metrics it was selected on alone (none its run logged itself), with every
warning that announces a removal (DeprecationWarning, PendingDeprecationWarning, FutureWarning) an error, so that a
deprecation on the way (ours, MLflow's or sentence-transformers') is seen before a release removes what the logging
relies on. Other warnings (MLflow's UserWarning about its own type hints, on import) stay warnings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.cluster_helpers import PROJECT, sqlite_store

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
    for key in ("best_sts_dev", "sts_dev"):  # the untrained model's scores, as a trial logs them at step 0
        client.log_metric(run.info.run_id, key, 50.0, step=0)
    client.set_terminated(run.info.run_id)
    with warnings.catch_warnings(record=True) as caught:
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.simplefilter("error", category)
        warnings.filterwarnings("always", message=re.escape(announced), category=DeprecationWarning)
        model_id = log_trial_model(uri, run.info.run_id, folder, {"best_sts_dev": 61.5, "step": 40})
    allowed = [[str(w.message), w.filename] for w in caught if w.category is DeprecationWarning]
    metrics = [[m.key, m.value, m.step] for m in client.get_logged_model(model_id).metrics]
    outputs = [o.model_id for o in client.get_run(run.info.run_id).outputs.model_outputs]
    print(json.dumps({"model_id": model_id, "allowed": allowed, "metrics": metrics, "outputs": outputs}))
""")


def test_a_trial_model_is_logged_with_deprecations_as_errors_but_the_announced_removal(tmp_path, tiny_model_dir):
    uri = sqlite_store(tmp_path)
    result = subprocess.run([sys.executable, "-c", LOG_WITH_WARNINGS_AS_ERRORS, uri, str(tiny_model_dir),
                             ANNOUNCED_REMOVAL], cwd=PROJECT, capture_output=True, text=True, timeout=600,
                            env=os.environ | {"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(PROJECT)})
    assert result.returncode == 0, result.stderr[-5000:]
    logged = json.loads(result.stdout.splitlines()[-1])
    assert logged["model_id"].startswith("m-")
    assert logged["metrics"] == [["best_sts_dev", 61.5, 40]]  # the selected value alone: no step-0 score of the run
    assert logged["outputs"] == [logged["model_id"]]  # the run's model, once
    (allowed,) = logged["allowed"]  # raised once, from MLflow's flavour; when it is gone, remove its allowance
    assert allowed[0].startswith(ANNOUNCED_REMOVAL) and allowed[1].endswith("mlflow/sentence_transformers/__init__.py")

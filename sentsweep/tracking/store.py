"""Where a sweep's results are stored: the MLflow tracking URI, whether it can be reached, artifact names.

Kept free of Ray and MLflow imports, so the analysis commands and the writer can use it offline.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

from sentsweep.errors import InputError

DEFAULT_DB_FILE = "mlflow.db"
PER_QUERY_ARTIFACT = "per_query.json"  # {metric: [outcome per query]} of the final evaluation, for paired tests


def resolve_tracking_uri(option: str | None = None) -> str:
    """The tracking URI: the option, else MLFLOW_TRACKING_URI, else a SQLite file in the working directory."""
    return option or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path.cwd() / DEFAULT_DB_FILE}"


def check_tracking_reachable(uri: str, timeout_s: float = 5.0) -> None:
    """Fail with an `InputError` naming `uri` unless its store can be reached now."""
    if uri.startswith(("http://", "https://")):
        try:
            with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=timeout_s) as response:
                if response.status != 200:
                    raise InputError(f"MLflow tracking server {uri} answered /health with {response.status}")
        except (urllib.error.URLError, OSError) as error:
            raise InputError(f"MLflow tracking server {uri} is unreachable: {error}") from None
    elif uri.startswith("sqlite:///"):
        folder = Path(uri[len("sqlite:///"):]).parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            raise InputError(f"MLflow SQLite store {uri}: folder {folder} does not exist or is not writable")


def store_reachable(uri: str, timeout_s: float = 3.0) -> bool:
    """True when `check_tracking_reachable` passes."""
    try:
        check_tracking_reachable(uri, timeout_s=timeout_s)
    except InputError:
        return False
    return True


def experiment_page(uri: str, experiment_id: str, view: str | None = None) -> str:
    """Where to look at an experiment's runs in the MLflow UI: with `view`, the saved view of that key (a sweep's
    configurations, best first: `sentsweep.tracking.views`). MLflow 3.17's UI opens every experiment on the pages
    of the workflow chosen in its top-left switch (GenAI traces by default), whatever the experiment's kind tag
    says; `workflowType=machine_learning` opens it on its training runs."""
    page = f"#/experiments/{experiment_id}/runs?workflowType=machine_learning"
    if view is not None:
        page += f"&viewStateShareKey={view}"
    if uri.startswith(("http://", "https://")):
        return f"{uri.rstrip('/')}/{page}"
    return (f"mlflow ui --backend-store-uri {uri} --host 127.0.0.1 --port 5000, then "
            f"http://127.0.0.1:5000/{page}")

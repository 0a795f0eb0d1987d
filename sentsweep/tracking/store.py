"""Where a sweep's results are stored: the MLflow tracking URI, whether it can be reached, artifact names, and the
pages of MLflow's UI a sweep prints (`sweep_pages`: its answer and its run, after the command that serves a store
that has no server).

Credentials in a tracking URI (`http://user:password@host`, `postgresql://user:password@host/db`) are never
printed or logged: `redact` writes every URI it finds in a text as `user:***@host`. An HTTP URI's credentials
are handed to MLflow the way it takes them, MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD
(`resolve_tracking_uri`), and the URI goes on without them, so that MLflow's own messages (a failed request
names its URL) do not carry them either; a database URI keeps them (SQLAlchemy reads them there).

Kept free of Ray and MLflow imports, so the analysis commands and the writer can use it offline.
"""

from __future__ import annotations

import base64
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from sentsweep.errors import InputError
from sentsweep.tracking.sqlite_store import check_sqlite_store, prepare_sqlite_store, sqlite_store_locked

DEFAULT_DB_FILE = "mlflow.db"
HIDDEN = "***"  # a password as printed
PER_QUERY_ARTIFACT = "per_query.json"  # {metric: [outcome per query]} of the final evaluation, for paired tests


def resolve_tracking_uri(option: str | None = None) -> str:
    """The tracking URI: the option, else MLFLOW_TRACKING_URI, else a SQLite file in the working directory; an
    HTTP URI's credentials go to MLflow's MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD (they win over
    those already set: the URI is the more explicit) and are left out of the URI returned. A password written
    `***` is one sentsweep printed hidden (`redact`: a printed --resume line holds it): MLFLOW_TRACKING_PASSWORD
    gives it."""
    uri = option or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path.cwd() / DEFAULT_DB_FILE}"
    if not uri.startswith(("http://", "https://")):
        return uri
    scheme, rest = uri.split("://", 1)
    authority, slash, path = rest.partition("/")
    credentials, at, host = authority.rpartition("@")
    if not at:
        return uri
    user, colon, password = credentials.partition(":")
    os.environ["MLFLOW_TRACKING_USERNAME"] = urllib.parse.unquote(user)
    if colon and password != HIDDEN:
        os.environ["MLFLOW_TRACKING_PASSWORD"] = urllib.parse.unquote(password)
    return f"{scheme}://{host}{slash}{path}"


# scheme://userinfo@ of a URI anywhere in a text; userinfo is whatever lies between :// and the last @ before the
# next blank or quote (a password may hold a / that its user forgot to percent-encode: it is redacted all the same)
_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s:/@'\"]*)(?P<password>:[^\s'\"]*)?@"
                          r"(?=[^\s'\"@]*(?:[\s'\"]|$))")


def redact(text: str) -> str:
    """`text` with the credentials of every URI in it written as `user:***@` (a user alone stays)."""
    return _CREDENTIALS.sub(
        lambda match: f"{match['scheme']}{match['user']}{':' + HIDDEN if match['password'] else ''}@", text)


def check_tracking_reachable(uri: str, timeout_s: float = 5.0) -> None:
    """Fail with an `InputError` naming `uri` (its credentials redacted) unless its store can be reached and opened
    now: an HTTP server answers /health and lets the given user (MLFLOW_TRACKING_USERNAME) read its experiments; a
    SQLite store's folder is writable and an existing store file opens (`check_sqlite_store`); a URI of a scheme
    MLflow has no store for is refused first (`check_tracking_scheme`)."""
    check_tracking_scheme(uri)
    if uri.startswith(("http://", "https://")):
        check_tracking_server(uri, timeout_s)
    elif uri.startswith("sqlite:///"):
        check_sqlite_store(uri, timeout_s)


def check_tracking_scheme(uri: str) -> None:
    """An `InputError` naming `uri` (its credentials redacted) unless MLflow has both a tracking store and a model
    registry for its scheme, as MLflow's own store registries list them (a local path or file:, sqlite,
    postgresql, mysql, mssql, http(s), databricks, and any a plugin registers)."""
    # lazy: mlflow
    from mlflow.tracking._model_registry.utils import _get_store_registry
    from mlflow.tracking._tracking_service.utils import _tracking_store_registry
    from mlflow.utils.uri import get_uri_scheme

    registries = (_tracking_store_registry._registry, _get_store_registry()._registry)
    scheme = get_uri_scheme(uri)
    if not all(scheme in registry for registry in registries):
        known = sorted(set.intersection(*(set(registry) for registry in registries)) - {""})
        raise InputError(f"MLflow has no store for the scheme {scheme!r} of the tracking URI {redact(uri)}; give a "
                         f"local path or a URI of one of: {', '.join(f'{name}://' for name in known)}")


def check_tracking_server(uri: str, timeout_s: float) -> None:
    """The server of `uri` answers /health (which MLflow's authentication leaves open) and its API with the
    credentials MLflow will send (MLFLOW_TRACKING_USERNAME / _PASSWORD): each problem refused with what it is."""
    shown = redact(uri)
    try:
        with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=timeout_s) as response:
            if response.status != 200:
                raise InputError(f"MLflow tracking server {shown} answered /health with {response.status}")
    except urllib.error.HTTPError as error:
        raise InputError(f"MLflow tracking server {shown} answered /health with HTTP {error.code} "
                         f"{error.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        raise InputError(f"MLflow tracking server {shown} is unreachable: {redact(str(reason))}") from None
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    request = urllib.request.Request(uri.rstrip("/") + "/api/2.0/mlflow/experiments/search?max_results=1")
    if user and password:  # MLflow sends basic authentication when both are set
        request.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())
    try:
        urllib.request.urlopen(request, timeout=timeout_s).close()
    except urllib.error.HTTPError as error:
        answer = f"HTTP {error.code} {error.reason}"
        if error.code not in (401, 403):
            raise InputError(f"MLflow tracking server {shown} answered its API with {answer}") from None
        if user and password:
            raise InputError(f"MLflow tracking server {shown} refused the credentials of user {user!r} ({answer}); "
                             "check the user name and password") from None
        raise InputError(f"MLflow tracking server {shown} asks for credentials ({answer}); give them in the URI "
                         "(http://USER:PASSWORD@host) or as MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD"
                         ) from None
    except (urllib.error.URLError, OSError) as error:
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        raise InputError(f"MLflow tracking server {shown} is unreachable: {redact(str(reason))}") from None


def prepare_store(uri: str) -> None:
    """Before the sweep's first write: a new SQLite store is created once, under its lock (`prepare_sqlite_store`),
    so that sweeps started together on it do not each create its tables; a server's store is its own."""
    if uri.startswith("sqlite:///"):
        prepare_sqlite_store(uri)


def store_reachable(uri: str, timeout_s: float = 3.0) -> bool:
    """True when `check_tracking_reachable` passes and, for a SQLite store, a write can take its lock within
    `timeout_s` (`store_locked`: a store another process holds locked is one a sweep cannot write to)."""
    try:
        check_tracking_reachable(uri, timeout_s=timeout_s)
    except InputError:
        return False
    return not store_locked(uri, timeout_s)


def store_locked(uri: str, timeout_s: float = 1.0) -> bool:
    """Whether the store of `uri` is a SQLite file whose write lock another process holds (`sqlite_store_locked`)."""
    return uri.startswith("sqlite:///") and sqlite_store_locked(uri, timeout_s)


def unreachable_words(uri: str) -> str:
    """How a store `store_reachable` finds away is said: a SQLite store is mostly one another process holds locked."""
    if uri.startswith("sqlite:///"):
        return "cannot be written to (another process holds its SQLite file locked, or the file cannot be opened)"
    return "cannot be reached"


LOCAL_UI = "http://127.0.0.1:5000"  # where `ui_command`'s MLflow UI serves a store that has no server
PAGE_SETTINGS = "workflowType=machine_learning"  # MLflow's model-training pages, not its GenAI ones
ANSWER_TITLE = "MLflow (the sweep's answer, best first):"
SWEEP_RUN_TITLE = "MLflow (the sweep's run):"
UI_COMMAND_TITLE = "MLflow's UI on this store (start it first):"


def ui_command(uri: str) -> str | None:
    """The command that serves the MLflow UI of a store that has no server (a SQLite file, a database) at
    `LOCAL_UI`: `sentsweep ui` (`sentsweep.tracking.ui`: one worker, the model-training layout); None for an HTTP
    tracking server, which serves its own."""
    if uri.startswith(("http://", "https://")):
        return None
    return f"sentsweep ui --tracking-uri {redact(uri)}"


def ui_address(uri: str) -> str:
    """The MLflow UI of a store: an HTTP tracking server's own address, else `LOCAL_UI` (`ui_command`)."""
    uri = redact(uri)
    return uri.rstrip("/") if uri.startswith(("http://", "https://")) else LOCAL_UI


def experiment_page(uri: str, experiment_id: str, view: str | None = None) -> str:
    """The URL of an experiment's runs in the MLflow UI: with `view`, the saved view of that key (a sweep's
    configurations, best first: `sentsweep.tracking.views`). MLflow 3.17's UI opens every experiment on the pages
    of the workflow chosen in its top-left switch (GenAI traces by default), whatever the experiment's kind tag
    says; `workflowType=machine_learning` opens it on its training runs."""
    page = f"{ui_address(uri)}/#/experiments/{experiment_id}/runs?{PAGE_SETTINGS}"
    return page + (f"&viewStateShareKey={view}" if view is not None else "")


def run_page(uri: str, experiment_id: str, run_id: str) -> str:
    """The URL of a run's page in the MLflow UI, on MLflow's model-training pages (`PAGE_SETTINGS`)."""
    return f"{ui_address(uri)}/#/experiments/{experiment_id}/runs/{run_id}?{PAGE_SETTINGS}"


def sweep_pages(uri: str, experiment_id: str, view: str, run_id: str) -> str:
    """What a sweep prints at its end (Markdown for `sentsweep.terminal.say`): the URL of its answer (the saved view
    `view` of its configurations, best first) and of its run (`run_id`), each on a line of its own, after the
    command that serves the UI where the store has no server. Each URL and the command are code lines, printed
    whole at any width."""
    command = ui_command(uri)
    lines = [UI_COMMAND_TITLE, f"    {command}"] if command else []
    lines += [ANSWER_TITLE, f"    {experiment_page(uri, experiment_id, view)}",
              SWEEP_RUN_TITLE, f"    {run_page(uri, experiment_id, run_id)}"]
    return "\n".join(lines)

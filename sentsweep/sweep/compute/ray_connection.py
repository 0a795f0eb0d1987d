"""Whether the Ray cluster a sweep would join lets its driver in, asked before anything runs.

`ray.init()` joins the cluster `RAY_ADDRESS` names, else the one last started with `ray start` on this machine
(Ray's own lookup, `canonicalize_bootstrap_address`), else starts a local Ray. A cluster that cannot be joined
makes `ray.init` wait for minutes (unreachable) or fail after many seconds with a long traceback (token
authentication, another Ray or Python). `check_ray_cluster` asks the cluster's GCS first, in seconds, and refuses
with one line naming the cause and the fix (`InputError`, exit code 2):

- unreachable: nothing answers at the address (a TCP connection, `CONNECT_TIMEOUT_S`);
- token authentication: the cluster runs with `RAY_AUTH_MODE=token` (a hand-started `ray start --head` does) and
  this process has no token, or another one;
- version skew: the cluster's Ray or Python differs from the driver's (Ray compares them as `ray.init` does: Ray
  exactly, Python to the patch level unless RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL=minor).

A Ray Client address (`ray://...`) is left to `ray.init`.

`ray_on_this_machine` says whether every node of that Ray runs on the driver's machine: there the driver has Ray
fork its workers (`sentsweep.worker_fork`), with the driver's interpreter.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import socket
import sys

from sentsweep.errors import InputError

CONNECT_TIMEOUT_S = 5.0
TOKEN_FIX = ("run the driver with the cluster's token: RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH=<the token file "
             "the cluster was started with> (or the token in ~/.ray/auth_token); docs/cluster.md, 'A cluster started "
             "by hand'")


def cluster_address() -> str | None:
    """host:port of the cluster `ray.init()` would join; None when it would start a local Ray or is given a Ray
    Client address."""
    if os.environ.get("RAY_ADDRESS", "").startswith("ray://"):
        return None
    from ray._private.services import canonicalize_bootstrap_address

    return canonicalize_bootstrap_address(None)


def where(address: str) -> str:
    """The address and how the driver came to it."""
    return (f"{address} (RAY_ADDRESS)" if os.environ.get("RAY_ADDRESS") else
            f"{address} (the cluster last started with `ray start` on this machine)")


def check_reachable(address: str) -> None:
    """An `InputError` unless something accepts a TCP connection at `address` within `CONNECT_TIMEOUT_S`."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except (OSError, ValueError) as error:
        raise InputError(f"the Ray cluster at {where(address)} does not answer ({error}): start it (ray start --head), "
                         "or point RAY_ADDRESS at a running one (RAY_ADDRESS=local starts a Ray of the sweep's own)"
                         ) from None


def version_skew(cluster: dict, ray_version: str, python_version: str, match_level: str = "patch") -> str | None:
    """What differs between the cluster's Ray and Python (its metadata: `ray_version`, `python_version`) and the
    driver's, as `ray.init` compares them; None when nothing does."""
    ours, theirs = python_version.split("."), str(cluster.get("python_version", "")).split(".")
    python_differs = ours[:2] != theirs[:2] if match_level == "minor" else ours != theirs
    if cluster.get("ray_version") == ray_version and not python_differs:
        return None
    return (f"runs Ray {cluster.get('ray_version')} on Python {cluster.get('python_version')}, this driver Ray "
            f"{ray_version} on Python {python_version}")


def check_ray_cluster() -> None:
    """Refuse, in one line, a cluster that would not let the driver in (see the module docstring)."""
    address = cluster_address()
    if address is None:
        return
    check_reachable(address)
    import ray
    from ray._raylet import GcsClient
    from ray.exceptions import AuthenticationError

    try:
        with native_stderr_silenced():  # Ray's C++ client logs each refused attempt; the refusal is said below
            metadata = GcsClient(address=address).internal_kv_get(b"CLUSTER_METADATA", namespace=b"cluster",
                                                                   timeout=CONNECT_TIMEOUT_S)
    except AuthenticationError:
        raise InputError(f"the Ray cluster at {where(address)} refused this driver: it runs with token "
                         f"authentication, and this driver has no token or another one; {TOKEN_FIX}") from None
    except Exception as error:  # noqa: BLE001 - a GCS that answers TCP but not Ray: say what it said, in one line
        raise InputError(f"the Ray cluster at {where(address)} did not answer as a Ray head: "
                         f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}") from None
    if not metadata:
        return  # a head that has not written its metadata yet: ray.init checks the versions itself
    skew = version_skew(json.loads(metadata), ray.__version__, platform.python_version(),
                        os.environ.get("RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL", "patch"))
    if skew:
        raise InputError(f"the Ray cluster at {where(address)} {skew}: Ray refuses a driver of other versions; run the "
                         "driver where the cluster's environment is installed (ray submit, or on the head), or install "
                         "the lock (constraints.txt) the cluster was installed from")


def ray_on_this_machine() -> bool:
    """Whether every node of the Ray the driver will use runs on this machine: a Ray it starts itself, or a
    cluster whose live nodes all have this machine's address (a Ray Client driver's cluster is elsewhere)."""
    if os.environ.get("RAY_ADDRESS", "").startswith("ray://"):
        return False
    address = cluster_address()
    if address is None:
        return True
    from ray._private.services import get_node_ip_address
    from ray._raylet import GcsClient
    from ray.core.generated.gcs_pb2 import GcsNodeInfo

    here = {"127.0.0.1", "localhost", get_node_ip_address()}
    with native_stderr_silenced():
        nodes = GcsClient(address=address).get_all_node_info(timeout=CONNECT_TIMEOUT_S,
                                                             state_filter=GcsNodeInfo.GcsNodeState.ALIVE)
    return all(node.node_manager_address in here for node in nodes.values())


@contextlib.contextmanager
def native_stderr_silenced():
    """File descriptor 2 pointed at /dev/null for the block: what native code (Ray's C++ logging) writes there is
    dropped; Python's own sys.stderr is flushed first and works again after."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)

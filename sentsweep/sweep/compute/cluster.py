"""Whether the Ray cluster can ever run a trial's request, checked before any trial starts, and how long trials
may wait PENDING.

**Requests that can never be scheduled.** A trial is one Ray placement-group bundle of `--cpus-per-trial` CPUs
and `--gpus-per-trial` GPUs, and a bundle lives on one node: it can run when some single node has at least both
(two nodes with 1 GPU each cannot run a 2-GPU trial, though the cluster has 2). Ray itself never says that a
request cannot fit; it leaves the trials PENDING forever. On a fixed cluster, the embedded local Ray or a cluster
whose nodes are what they are, such a request is refused before any trial, as bad input (`InputError`, exit
code 2), naming the request and every node's resources.

A cluster whose autoscaler adds nodes on demand (cluster.yaml's GPU workers start at 0) may well run a request
that no current node fits, so there the check cannot refuse anything: the sweep is told so with `--autoscaling`.
An explicit flag, because nothing public says whether a cluster autoscales: every `ray start --head` runs an
autoscaler monitor, with a read-only provider that never adds a node on a fixed cluster, and the provider's
real configuration lives on the head node's disk (the cluster launcher's ~/ray_bootstrap_config.yaml) or in a
KubeRay resource, behind private Ray APIs that change between versions. Guessing wrong either way is worse than
asking: a false "fixed" refuses a sweep that would run, a false "autoscaling" brings back the silent hang. The
refusal names `--autoscaling`, so a user of an autoscaling cluster learns it at the first try.

On an autoscaling cluster a request may still never be met (no node type is big enough, a quota is exhausted).
`--pending-timeout SECONDS` bounds that wait: `PendingWatch`, a Ray Tune callback, ends the Ray Tune run once
trials have waited PENDING that long with none running (queued trials behind running ones are not stuck), and
the runner ends the sweep as an interruption ends it (finished trials' results written, the runs KILLED,
resumable with --resume once the cluster can run them, with a smaller request if need be) with a message naming
the request and the nodes seen at that moment (`PendingTimeout`, exit code 1)."""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

from ray.tune import Callback

from sentsweep.errors import InputError
from sentsweep.sweep.config.options import SweepOptions

# ---------------------------------------------------------------------------------------------------------------
# Requests no node can run


@dataclass(frozen=True)
class Node:
    """A live Ray node's total resources."""

    address: str
    cpus: float
    gpus: float

    def describe(self) -> str:
        return f"{_count(self.gpus, 'GPU')} (CPUs {self.cpus:g})"


def cluster_nodes() -> list[Node]:
    """The live nodes of the connected Ray cluster (`ray.nodes()`), with their total CPUs and GPUs."""
    import ray

    return [Node(node["NodeManagerAddress"], node["Resources"].get("CPU", 0.0), node["Resources"].get("GPU", 0.0))
            for node in ray.nodes() if node.get("Alive")]


def cluster_address() -> str:
    import ray

    return ray.get_runtime_context().gcs_address


def describe_cluster(address: str, nodes: list[Node]) -> str:
    """'the Ray cluster at ADDRESS has 0 GPUs (CPUs 2)', or with several nodes one entry per node."""
    if len(nodes) == 1:
        return f"the Ray cluster at {address} has {nodes[0].describe()}"
    listed = "; ".join(f"{node.address}: {node.describe()}" for node in nodes) or "none"
    return f"the Ray cluster at {address} has {len(nodes)} nodes ({listed})"


def unschedulable_problem(cpus: float, gpus: float, address: str, nodes: list[Node]) -> str | None:
    """What is wrong with a trial of `cpus` CPUs and `gpus` GPUs on these nodes, or None when one node fits it.
    The option named is the one no node satisfies on its own, else both (each is met, never on one node)."""
    if any(node.cpus >= cpus and node.gpus >= gpus for node in nodes):
        return None
    gpus_met = any(node.gpus >= gpus for node in nodes)
    cpus_met = any(node.cpus >= cpus for node in nodes)
    request = (f"--gpus-per-trial {gpus:g}" if cpus_met and not gpus_met else
               f"--cpus-per-trial {cpus:g}" if gpus_met and not cpus_met else
               f"--cpus-per-trial {cpus:g} --gpus-per-trial {gpus:g}")
    if cpus_met and gpus_met:
        request += f" (a trial runs on one node, which needs {_count(cpus, 'CPU')} and {_count(gpus, 'GPU')})"
    return (f"{request}: {describe_cluster(address, nodes)}; no trial could ever start. Ask for less, or pass "
            "--autoscaling if the cluster adds nodes on demand")


def check_schedulable(cpus: float, gpus: float, address: str, nodes: list[Node], autoscaling: bool) -> None:
    """Refuse (`InputError`) a request no node of a fixed cluster fits; on an autoscaling one, let it wait."""
    problem = None if autoscaling else unschedulable_problem(cpus, gpus, address, nodes)
    if problem:
        raise InputError(problem)


def trial_slots(cpus: float, gpus: float, nodes: list[Node]) -> int:
    """How many trials asking `cpus` CPUs and `gpus` GPUs each the `nodes` run at once (a trial runs on one
    node): per node the fewer of its CPUs' and its GPUs' room, summed; at least 1."""
    def room(total: float, each: float) -> int:
        return math.floor(total / each + 1e-9) if each else math.inf

    return max(1, sum(min(room(node.cpus, cpus), room(node.gpus, gpus)) for node in nodes))


class PendingTimeout(Exception):
    """Trials waited PENDING for --pending-timeout seconds with none running; the message says what they asked
    for and what the cluster had."""


class PendingWatch(Callback):
    """Ends a Ray Tune run when its trials have waited PENDING for `timeout_s` seconds while none ran.

    Trials queued behind running ones are PENDING too, for as long as the sweep lasts, so the clock runs only
    while nothing runs: that is a request the cluster does not meet (on an autoscaling cluster: no node that fits
    came in time). The watch looks at the trials at each step of Ray Tune's loop and, at the timeout, sets
    `message` and `interrupt()`s the run as Ctrl-C does (SIGINT: Ray Tune stops and saves the run with the
    waiting trials still PENDING, so --resume starts them, with the resources its command line gives). A Ray Tune
    Stopper would end them TERMINATED instead, trials that --resume never runs.

    Ray Tune pickles a run's callbacks with its state and, on --resume, restores those copies
    instead of taking new ones. A watch therefore pickles as a reference to the watch of the same run `name`
    that this process created (`watch_named`), so a resumed run is watched by this driver's watch with this
    command's --pending-timeout, and the runner reads the verdict on its own object (a run started without a
    watch has none to restore: --pending-timeout given only at --resume has no effect).
    """

    def __init__(self, name: str, timeout_s: float | None, cpus: float, gpus: float,
                 clock: Callable[[], float] = time.monotonic,
                 describe: Callable[[], str] = lambda: describe_cluster(cluster_address(), cluster_nodes()),
                 interrupt: Callable[[], None] = lambda: signal.raise_signal(signal.SIGINT)) -> None:
        self.name = name
        self.timeout_s = timeout_s
        self.cpus = cpus
        self.gpus = gpus
        self.message: str | None = None
        self._clock = clock
        self._describe = describe
        self._interrupt = interrupt
        self._waiting_since: float | None = None
        _WATCHES[name] = self

    def __reduce__(self):
        return watch_named, (self.name,)

    def on_step_begin(self, iteration: int, trials: list, **info) -> None:
        if self.message is not None or self.timeout_s is None:
            return
        pending = sum(trial.status == "PENDING" for trial in trials)
        if not pending or any(trial.status == "RUNNING" for trial in trials):
            self._waiting_since = None
            return
        now = self._clock()
        if self._waiting_since is None:
            self._waiting_since = now
        elif now - self._waiting_since >= self.timeout_s:
            self.message = (
                f"--pending-timeout {self.timeout_s:g}: {pending} trial(s) waited PENDING {self.timeout_s:g} s "
                f"with none running; each asks for {_count(self.cpus, 'CPU')} and {_count(self.gpus, 'GPU')} on "
                f"one node, and {self._describe()}")
            self._interrupt()


_WATCHES: dict[str, PendingWatch] = {}


def watch_named(name: str) -> PendingWatch:
    """The watch this process created for run `name`, else one that never fires (see `PendingWatch`)."""
    return _WATCHES.get(name) or PendingWatch(name, None, 0.0, 0.0)


def pending_watch(options: SweepOptions, run_name: str, gpus_per_trial: float) -> PendingWatch | None:
    """The watch of one Ray Tune run under --pending-timeout, or None without one."""
    if options.pending_timeout is None:
        return None
    return PendingWatch(run_name, options.pending_timeout, options.cpus_per_trial, gpus_per_trial)


def _count(amount: float, unit: str) -> str:
    return f"{amount:g} {unit}" + ("" if amount == 1 else "s")

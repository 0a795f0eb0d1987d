"""What a trial's own process costs: a trial in a fresh interpreter, as in each process Ray starts for a Ray Tune
run, against the same trial in a child forked from a process that has already imported what it needs; then what
that saves a whole sweep, whose Ray workers sentsweep forks so (`sentsweep.worker_fork`).

Both run one 20-step TSDAE trial of the tiny model (the sweeps' --quick) in one thread, as a trial of 1 CPU runs;
the CPU seconds of the child process are counted, 3 rounds alternating, the best of each. The fresh interpreter
imports PyTorch, sentence-transformers and the trainables first, as every trial process does; the forked child
starts with them. No goal: the figure is the fixed cost of a trial process, which a sweep pays per slot and per
stage, and the test suite about 240 times (docs/performance.md, "The test suite's time").

The sweep: `python sweeps/tsdae_deletion.py --quick` (8 trials of the tiny model on the driver's own local Ray, 2
slots), with its workers forked and with `SENTSWEEP_FORKED_WORKERS=0` (Ray starts each), 3 rounds alternating, the
best of each; its CPU is the machine's (/proc/stat: the driver, Ray's processes, the trials, the fork server), so the
machine should be otherwise idle. The fork server, started by the first forked round, stays between rounds (it ends
after 2 idle minutes), as between a researcher's sweeps in a row or the sweeps of the test suite.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import Result, best_of_alternating

ROOT = Path(__file__).resolve().parents[1]
# one trial, as a Ray worker runs it: import the trainables, then train (the model's folder is argv[1])
TRIAL = """
import sys
import torch
torch.set_num_threads(1)
from sentsweep.demo_data import CORPUS_FILE, DEMO_DIR
from sentsweep.trainables.catalog import train
from sentsweep.trainables.session import LocalSession
train(dict(method="tsdae", model=sys.argv[1], corpus=str(CORPUS_FILE), dev_file=str(DEMO_DIR / "sts-dev.csv"),
           test_file=str(DEMO_DIR / "sts-test.csv"), eval_format="stsb", noise_type="delete", noise_ratio=0.6,
           pooling="cls", tie_decoder=True, lr=1e-3, batch_size=8, max_steps=20, eval_steps=10, max_seq_length=32,
           seed=0), LocalSession())
"""


def fresh_interpreter(model: str) -> float:
    """CPU seconds of the trial in a new Python process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", TRIAL, model], cwd=ROOT, check=True, capture_output=True,
                   env=os.environ | {"OMP_NUM_THREADS": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def forked_child(model: str) -> float:
    """CPU seconds of the trial in a child forked from this process, which has imported what the trial needs."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            sys.argv = ["trial", model]
            exec(TRIAL, {"__name__": "trial"})
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("the forked trial failed")
    return usage.ru_utime + usage.ru_stime


def quick_sweep(forked: bool) -> float:
    """Seconds of the machine's CPU (all processes) while the quick TSDAE sweep runs, its workers forked or not."""
    ticks = os.sysconf("SC_CLK_TCK")

    def machine_cpu() -> float:
        user, nice, system = (int(field) for field in Path("/proc/stat").read_text().split()[1:4])
        return (user + nice + system) / ticks

    with tempfile.TemporaryDirectory() as output:
        before = machine_cpu()
        subprocess.run([sys.executable, "sweeps/tsdae_deletion.py", "--quick", "--output-dir", output,
                        "--tracking-uri", f"sqlite:///{output}/mlflow.db"], cwd=ROOT, check=True,
                       capture_output=True, env=os.environ | {"SENTSWEEP_FORKED_WORKERS": "1" if forked else "0"})
        return machine_cpu() - before


def run() -> list[Result]:
    import sentence_transformers  # noqa: F401  (what a trial process imports, done here before forking)

    from sentsweep.data import read_corpus
    from sentsweep.demo_data import CORPUS_FILE
    from sentsweep.models import build_tiny_model
    from sentsweep.trainables.catalog import train  # noqa: F401

    with tempfile.TemporaryDirectory() as folder:
        model = str(build_tiny_model(Path(folder) / "tiny", read_corpus(CORPUS_FILE)))
        rates = best_of_alternating({"fresh": lambda: 3600 / fresh_interpreter(model),
                                     "forked": lambda: 3600 / forked_child(model)})
    print(f"a trial process: {3600 / rates['fresh']:.2f} s of CPU fresh, {3600 / rates['forked']:.2f} s forked",
          flush=True)
    sweeps = best_of_alternating({"forked": lambda: 3600 / quick_sweep(forked=True),
                                  "started by Ray": lambda: 3600 / quick_sweep(forked=False)})
    print(f"the quick TSDAE sweep: {3600 / sweeps['forked']:.1f} s of CPU with its workers forked, "
          f"{3600 / sweeps['started by Ray']:.1f} s with Ray starting them", flush=True)
    return [Result("a 20-step tiny TSDAE trial in its own process (1 thread)", rates["fresh"], rates["forked"],
                   "trials/CPU-h", "the same trial forked from a process with its imports done"),
            Result("the quick TSDAE sweep (8 trials), its Ray workers forked", sweeps["forked"],
                   sweeps["started by Ray"], "sweeps/CPU-h", "the same sweep, Ray starting its workers")]


if __name__ == "__main__":
    for result in run():
        print(result.row())

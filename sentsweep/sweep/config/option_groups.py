"""How a sweep script's `--help` groups its options: the experiment's own first, then the options every sweep shares
in the groups of `SHARED_GROUPS`, each with a line saying what it holds.

The table is the one place an option's group is decided: an option `SweepOptions` gains must be added to it
(`tests/sweep/test_sweep_options.py` fails on one that is not; until then `--help` shows it under `UNGROUPED`). An
experiment's own options (the fields its options subclass adds) are its first group, `EXPERIMENT_GROUP`.
"""

from __future__ import annotations

EXPERIMENT_GROUP = "this experiment"
EXPERIMENT_GROUP_LINE = "the options of this experiment alone (its grid's values, its stages)"
UNGROUPED = "other options"

# title -> (what the group holds, the SweepOptions fields in it, in the order --help lists them)
SHARED_GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "data and model": (
        "what trains and what scores it",
        ("quick", "model", "corpus", "sts_dir", "sick_file", "hf_sts", "eval_task", "select_on", "mteb_results"),
    ),
    "grid and seeds": (
        "the trials: seeds, added axes, adding to a finished sweep",
        ("seeds", "sample_sizes", "batch_sizes", "extend"),
    ),
    "training": (
        "settings of every trial, over the protocol's (`--dry-run` shows each with its source)",
        ("assignments", "lr", "max_steps", "eval_steps", "max_seq_length", "plugin"),
    ),
    "search, racing and stopping": (
        "how configurations are chosen, raced over seeds, stopped early, and when a sweep ends",
        ("search", "num_configs", "sampler", "objective", "scheduler", "race", "race_schedule", "race_rungs",
         "race_initial_seeds", "race_budget", "race_test", "race_tolerance", "race_alpha", "time_budget",
         "gpu_hours", "resume"),
    ),
    "statistics": (
        "the claims of the tables: significance groups and reproduction intervals",
        ("alpha", "correction"),
    ),
    "cluster and resources": (
        "what each trial holds, where Ray Tune keeps its state, what happens when a trial fails",
        ("cpus_per_trial", "gpus_per_trial", "autoscaling", "pending_timeout", "max_failures", "storage_path",
         "no_cache"),
    ),
    "tracking and output": (
        "MLflow, the models kept, what the terminal shows",
        ("dry_run", "tracking_uri", "experiment", "mlflow_wait", "output_dir", "keep_models", "verbose",
         "progress_interval"),
    ),
}

GROUP_OF: dict[str, str] = {name: title for title, (_, names) in SHARED_GROUPS.items() for name in names}


def group_of(name: str, shared: set[str]) -> str:
    """The group of option `name`: its shared group, the experiment's own for a field `SweepOptions` lacks
    (`shared`: the names of SweepOptions' fields), else `UNGROUPED`."""
    if name not in shared:
        return EXPERIMENT_GROUP
    return GROUP_OF.get(name, UNGROUPED)


def group_order() -> list[str]:
    """The groups in the order --help lists them."""
    return [EXPERIMENT_GROUP, *SHARED_GROUPS, UNGROUPED]


def group_line(title: str) -> str | None:
    """The line under a group's title in --help."""
    if title == EXPERIMENT_GROUP:
        return EXPERIMENT_GROUP_LINE
    return SHARED_GROUPS[title][0] if title in SHARED_GROUPS else None


def examples_epilog(command: str) -> str:
    """The examples that close a sweep script's --help; `command` runs it (`python sweeps/nm_weight.py`)."""
    examples = [
        ("--dry-run", "the protocol card: every setting with its source, the trials, the compute"),
        ("--quick", "a tiny random model on the shipped demo data: minutes on a CPU"),
        ("--model bert-base-uncased --corpus corpus.txt --sts-dir data/stsbenchmark --seeds 5",
         "the seeds' setup on your data"),
        ("--quick --seeds 3 --max-steps 100", "3 seeds, 100 training steps per trial"),
        ("--quick --resume", "continue the latest sweep after an interruption"),
    ]
    if command.startswith("python "):  # a script: what `ray submit` runs on a cluster's head
        examples.append((f"ray submit cluster.yaml {command.removeprefix('python ')} --model bert-base-uncased "
                         "--gpus-per-trial 0.25", "the same sweep on a Ray cluster (SLURM: sbatch slurm/sweep.sbatch)"))
    lines = ["examples:"]
    for arguments, what in examples:
        lines += [f"  # {what}", f"  {arguments if arguments.startswith('ray ') else f'{command} {arguments}'}"]
    return "\n".join(lines)

"""The command line in the field's conventions: a sweep script's options in argument groups (the experiment's own
first), every default shown, help in words, examples; `sentsweep --version`; every sub-command honours --help and
refuses an unknown argument; a closed pipe ends a command quietly; `sentsweep list` says what its codes mean."""

import dataclasses
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sentsweep.cli import COMMANDS, main
from sentsweep.experiments import experiment_names, get_experiment
from sentsweep.sweep.config.option_groups import EXPERIMENT_GROUP, GROUP_OF, SHARED_GROUPS, UNGROUPED, examples_epilog
from sentsweep.sweep.config.options import SweepOptions, build_options_parser
from sentsweep.terminal import PIPE_CLOSED_EXIT_CODE

ROOT = Path(__file__).resolve().parents[1]
MODULE_PATH = re.compile(r"\bsentsweep\.[a-z_]+")


def test_every_shared_option_has_exactly_one_group_and_every_grouped_name_is_an_option():
    """The table of option groups covers SweepOptions: an option added to it without a group fails here."""
    fields = [spec.name for spec in dataclasses.fields(SweepOptions)]
    listed = [name for _, names in SHARED_GROUPS.values() for name in names]
    assert sorted(listed) == sorted(set(listed)), "an option is in two groups"
    assert set(fields) - set(listed) == set(), "options without a group (add them to SHARED_GROUPS)"
    assert set(listed) - set(fields) == set(), "grouped names that are no option of SweepOptions"


def groups_of_help(parser) -> list[tuple[str, list[str]]]:
    """(title, flags) of each argument group that --help shows, in its order."""
    return [(group.title, [action.option_strings[0] for action in group._group_actions])
            for group in parser._action_groups if group._group_actions]


@pytest.mark.parametrize("name", experiment_names())
def test_a_sweeps_help_groups_its_options_the_experiments_own_first_with_every_default_in_words(name):
    definition = get_experiment(name)
    parser = build_options_parser(definition.options, f"python sweeps/{name}.py", definition.description,
                                  examples_epilog(f"python sweeps/{name}.py"))
    shown = groups_of_help(parser)
    titles = [title for title, _ in shown]
    own = {spec.name for spec in dataclasses.fields(definition.options)} - {
        spec.name for spec in dataclasses.fields(SweepOptions)}
    expected = ([EXPERIMENT_GROUP] if own else []) + list(SHARED_GROUPS)
    assert titles == ["options", *expected], titles  # argparse's own group (-h) first, then the experiment's
    assert UNGROUPED not in titles
    for action in parser._actions:
        if action.dest == "help":
            continue
        assert not MODULE_PATH.search(action.help), f"{action.option_strings[0]}: {action.help}"
        if action.nargs != 0:  # every option that takes a value says its default (a switch is off)
            assert "default" in action.help, f"{action.option_strings[0]}: {action.help}"
    text = parser.format_help()
    assert text.startswith(f"usage: python sweeps/{name}.py [options]\n")
    assert "examples:\n  # the protocol card" in text and f"\n  python sweeps/{name}.py --dry-run\n" in text


def test_nm_weights_help_reads_its_own_options_first_and_shows_defaults():
    definition = get_experiment("nm_weight")
    text = build_options_parser(definition.options, "python sweeps/nm_weight.py", definition.description).format_help()
    assert text.index("this experiment:") < text.index("--weights") < text.index("data and model:")
    assert "--weight-range" in text and "(default: 0.0001 1.0)" in text
    assert re.search(r"--cpus-per-trial CPUS_PER_TRIAL\s+CPUs per trial .* \(default: 1.0\)", text, re.S)
    groups = dict(groups_of_help(build_options_parser(definition.options)))
    assert groups["data and model"][:2] == ["--quick", "--model"]
    assert set(groups["statistics"]) == {"--alpha", "--correction"}
    assert all(GROUP_OF[flag[2:].replace("-", "_")] == "search, racing and stopping"
               for flag in groups["search, racing and stopping"])


@pytest.mark.parametrize("argv", [["--help"], ["analyze", "--help"], ["run", "nm_weight", "--help"]])
def test_the_top_level_helps_fit_80_columns_with_their_examples(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr().out
    assert "examples:" in out and max(map(len, out.splitlines())) <= 80


def test_version_names_the_package_and_its_commit(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    assert re.fullmatch(rf"sentsweep \d+\.\d+\.\d+\S* \(commit {commit}(-dirty)?\)\n", capsys.readouterr().out)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_sub_command_honours_help_and_refuses_an_unknown_argument(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: sentsweep {command}"), out[:200]
    assert max(map(len, out.splitlines())) <= 80  # fitted to the terminal
    with pytest.raises(SystemExit) as stop:
        main([command, "--bogus"])
    assert stop.value.code == 2
    assert f"usage: sentsweep {command}" in capsys.readouterr().err


def test_a_sweep_by_name_refuses_an_unknown_argument(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", "nm_weight", "--bogus"])
    assert stop.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_sentsweep_list_explains_its_source_codes(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    experiments = [line for line in out.splitlines() if re.match(r"\S+ +\[", line)]
    assert len(experiments) == len(experiment_names())
    codes = {re.search(r"\[([^]]+?) *\]", line)[1] for line in experiments}
    assert {"Reiml 2023", "TSDAE", "project"} <= codes
    key = out[out.index("Sources:"):]
    for code in codes:  # each code used is explained once, below the list
        assert key.count(f"[{code}]") == 1, code
    assert "[Reiml 2023]" in key and "Johanna Reiml (2023)" in key
    assert re.search(r"\[project\] +the project's own experiment", key)


@pytest.mark.parametrize("command", [["-m", "sentsweep", "list"], ["sweeps/tsdae_deletion.py", "--dry-run"]],
                         ids=["sentsweep list", "a sweep's --dry-run"])
def test_a_closed_pipe_ends_a_command_quietly(command):
    """`sentsweep list | head -2`: the reader is gone before the command writes; no traceback, the code of SIGPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, *command], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, timeout=300, env=os.environ | {"PYTHONPATH": str(ROOT)})
    finally:
        os.close(write_end)
    assert done.stderr == "" and done.returncode == PIPE_CLOSED_EXIT_CODE


@pytest.mark.parametrize("sigint", [signal.SIG_IGN, signal.SIG_DFL, "installed"])
def test_a_sigterm_stops_a_sweep_as_ctrl_c_does_also_where_sigint_is_ignored(sigint):
    """The SIGTERM handler (sentsweep.sweep.execution.interrupts) raises SIGINT where a handler takes it (Ray Tune's
    during a stage), and raises the KeyboardInterrupt that Ctrl-C would raise where SIGINT is ignored, as in a
    background job (`nohup python sweeps/nm_weight.py &`): a raised SIGINT would be lost there, and the sweep would go
    on."""
    from sentsweep.sweep.execution.interrupts import stop_as_interrupt

    taken = []
    previous = signal.signal(signal.SIGINT, (lambda number, frame: taken.append(number)) if sigint == "installed"
                             else sigint)
    try:
        if sigint == "installed":
            stop_as_interrupt(signal.SIGTERM, None)
            assert taken == [signal.SIGINT]
        else:
            with pytest.raises(KeyboardInterrupt):
                stop_as_interrupt(signal.SIGTERM, None)
    finally:
        signal.signal(signal.SIGINT, previous)

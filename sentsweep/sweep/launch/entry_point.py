"""A sweep script's entry point: the command line is parsed and its options checked on their own first
(`sentsweep.sweep.config.option_checks`), so that --help, a malformed option and one out of its bounds cost neither Ray
nor torch; the parsed sweep then goes to `sentsweep.sweep.launch.launcher`, which checks every input and runs it."""

from __future__ import annotations

import signal
import sys

from sentsweep.errors import InputError
from sentsweep.plugins import import_plugin
from sentsweep.sweep.config.definition import SweepDefinition
from sentsweep.sweep.config.option_checks import check_option_bounds, check_search_combination
from sentsweep.sweep.config.option_groups import examples_epilog
from sentsweep.sweep.config.options import SweepOptions, parse_options
from sentsweep.sweep.execution.interrupts import ignore_signals_at_exit, stop_as_interrupt
from sentsweep.sweep.execution.library_output import library_output
from sentsweep.terminal import closed_pipe
from sentsweep.tracking.command_record import note_command


def run_sweep(definition: SweepDefinition, argv=None, prog: str | None = None) -> int:
    """Entry point of a sweep script: parse `argv` (the process' arguments when None) as the command line does, run
    the sweep of `definition` and return the process exit code (0 finished, 1 failed, 2 bad input, 3 a stage
    without results, 130 interrupted); `prog` names the command in its help and messages.

    Examples:
        A sweep script (`sweeps/tsdae_deletion.py`) is these lines:

        >>> import sys
        >>> if __name__ == "__main__":  # doctest: +SKIP
        ...     sys.exit(sentsweep.run_sweep(sentsweep.get_experiment("tsdae_deletion")))

        Bad input prints one line (`error: ...`, on standard error) and returns 2 before anything runs:

        >>> sentsweep.run_sweep(sentsweep.get_experiment("tsdae_deletion"), ["--quick", "--ratios", "-1"])
        2
    """
    prog = prog or script_command(definition)
    options = parse_options(definition.options, argv, prog, definition.description, examples_epilog(prog))
    note_command(sys.argv[1:] if argv is None else list(argv), prog, definition.name)  # the sweep run records it
    # SIGTERM stops a sweep as Ctrl-C does, also before Ray starts
    signal.signal(signal.SIGTERM, stop_as_interrupt)
    try:
        code = start_sweep(definition, options)
        sys.stdout.flush()  # here, not at exit: a closed pipe (`--dry-run | head`) is met where it is handled
        return code
    except BrokenPipeError:
        return closed_pipe()
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted before any trial started: nothing to resume", file=sys.stderr)
        return 130
    finally:
        ignore_signals_at_exit()


def start_sweep(definition: SweepDefinition, options: SweepOptions) -> int:
    """Check the parsed options on their own and together, import the plugins they name, then check every input
    and run the sweep (`sentsweep.sweep.launch.launcher.launch`); returns the exit code, raises `InputError` on bad
    input before anything runs. A script's `run_sweep` and `sentsweep.run` both start a sweep here."""
    check_option_bounds(options)  # the options on their own and together: before torch or Ray load
    check_search_combination(options)
    for plugin in options.plugin:  # before anything reads the registries their entries join
        import_plugin(plugin)
    from sentsweep.sweep.launch.launcher import launch  # lazy: ray, torch

    with library_output(options.verbose):  # the libraries' start-up chatter hidden from here on (--verbose: not)
        return launch(definition, options)


def script_command(definition: SweepDefinition) -> str:
    """How the running script is started, for its --help: `python sweeps/nm_weight.py` as typed, or the sweep's
    script in sweeps/ when the program is no script (a test, a notebook)."""
    script = sys.argv[0] if sys.argv and sys.argv[0].endswith(".py") else f"sweeps/{definition.name}.py"
    return f"python {script}"

"""A benchmark's record: what it printed and its ratio rows, written as the Markdown file that docs/performance.md
includes, so the page shows each figure as the command that measures it wrote it.

    .venv/bin/python -m benchmarks.run_all --only racing --record docs/benchmarks

writes `docs/benchmarks/racing.md`: the command, the machine, the benchmark's rows of ours / reference and
everything it printed, verbatim.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

ROW_HEADER = "| benchmark | ours | reference | unit | reference is | ratio | goal |\n|---|---|---|---|---|---|---|"


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, terminal):
        self.terminal = terminal
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.terminal.write(text)
        self.copy.write(text)
        return len(text)

    def flush(self) -> None:
        self.terminal.flush()


@contextlib.contextmanager
def printed_output():
    """Collects what the block prints, still printing it; yields the collector (its `.copy.getvalue()`)."""
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield tee


def record_text(name: str, machine: str, rows: list[str], printed: str) -> str:
    """The record of benchmark `name` as Markdown: the command, the machine, its ratio rows, what it printed."""
    command = f"python -m benchmarks.run_all --only {name} --record docs/benchmarks"
    body = printed.rstrip("\n").replace("```", "'''")
    text = f"Written by `{command}` on {machine}.\n"
    text += f"\n{ROW_HEADER}\n" + "\n".join(rows) + "\n" if rows else ""
    return text + (f"\nWhat it printed:\n\n```text\n{body}\n```\n" if body else "")


def write_record(folder: Path, name: str, machine: str, rows: list[str], printed: str) -> Path:
    """Writes `folder/<name>.md` (see `record_text`) and returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(record_text(name, machine, rows, printed), encoding="utf-8")
    return path

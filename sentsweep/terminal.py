"""Text for a terminal: paragraphs wrapped and Markdown tables fitted to its width, so that no line sentsweep prints
runs past the right edge (and wraps mid-token there), but for a word longer than the width, which stays whole.

The width is the COLUMNS variable's where it is set, else that of the terminal the output goes to; output that goes
to no terminal (a file, a pipe, a SLURM log) keeps its lines whole, for grep and for a viewer that wraps them
itself. A paragraph wraps at spaces only: no word is ever cut, and one longer than a line (a URL, a path) stands
whole on a line of its own, so that a terminal's link detection and copy-paste get all of it. A line indented by
four spaces (Markdown's code block: a command to paste, a link to open) is printed as written, never wrapped. A
Markdown table stays as it is where it fits; one wider than the terminal is split into several tables of the same
rows, each repeating the rows' leading key columns, as pandas prints a wide frame.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from typing import TextIO

# an ANSI escape sequence: a control sequence (colours, cursor moves: ESC [ ... final byte), an operating system
# command (a window title, a hyperlink: ESC ] ... BEL or ESC \), or a two-byte escape
ANSI_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def plain_text(text: str) -> str:
    """`text` without its ANSI escape sequences (the colours a library's traceback was printed in)."""
    return ANSI_ESCAPE.sub("", text)


def terminal_columns(stream: TextIO | None = None) -> int | None:
    """The width to fit output to `stream` (default: standard output): COLUMNS where set, else the terminal's
    width; None for output to no terminal (or to one that reports no size)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
        if columns > 0:
            return columns
    except ValueError:
        pass
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        pass
    return None


CODE_INDENT = "    "  # Markdown's code block: a line printed as written


def wrap_words(text: str, width: int, **indents: str) -> list[str]:
    """`text` in lines of at most `width` columns, broken at spaces only (`textwrap.wrap`'s `initial_indent` and
    `subsequent_indent` as `indents`): a word longer than a line (a URL, a path, a hyphenated name) stays whole, on
    a line of its own."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False, **indents)


def wrap_paragraph(text: str, width: int, indent: str = "", subsequent: str | None = None) -> str:
    """One paragraph wrapped at spaces to `width` columns (`indent` before the first line, `subsequent` before the
    others: the first's by default); a word longer than a line stays whole (`wrap_words`)."""
    return "\n".join(wrap_words(text, max(width, 20), initial_indent=indent,
                                subsequent_indent=indent if subsequent is None else subsequent)) or indent.rstrip()


def is_table_line(line: str) -> bool:
    return line.startswith("|") and line.rstrip().endswith("|")


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table line (cells hold no '|' in sentsweep's tables)."""
    return [cell.strip() for cell in line.strip()[1:-1].split("|")]


def fit_table(lines: list[str], width: int, keys: int = 1) -> str:
    """A Markdown table (its header, separator and rows) as it is where every line fits in `width` columns, else
    split into tables that each fit (as far as one column does), every one repeating the first `keys` columns."""
    if max(map(len, lines)) <= width:
        return "\n".join(lines)
    rows = [table_cells(line) for index, line in enumerate(lines) if index != 1]
    count = max(len(row) for row in rows)
    rows = [row + [""] * (count - len(row)) for row in rows]
    widths = [max(len(row[column]) for row in rows) for column in range(count)]
    keys = min(keys, count - 1) if count > 1 else 0

    def line_width(columns: list[int]) -> int:
        return sum(widths[column] + 3 for column in columns) + 1

    blocks: list[list[int]] = []
    for column in range(keys, count):
        if blocks and line_width(list(range(keys)) + blocks[-1] + [column]) <= width:
            blocks[-1].append(column)
        else:
            blocks.append([column])
    rendered = []
    for block in blocks or [[]]:
        columns = list(range(keys)) + block
        text = ["| " + " | ".join(row[c] for c in columns) + " |" for row in rows]
        text.insert(1, "|" + "|".join("---" for _ in columns) + "|")
        rendered.append("\n".join(text))
    return "\n\n".join(rendered)


def fit_markdown(text: str, width: int | None, table_keys: int = 1) -> str:
    """Markdown text fitted to `width` columns (None: as it is): tables by `fit_table` (`table_keys` leading key
    columns), list items and paragraphs wrapped (a list item's lines indented under its text), a code line
    (indented by `CODE_INDENT`: a command, a link) kept as written."""
    if width is None:
        return text
    out: list[str] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if is_table_line(line):
            end = index
            while end < len(lines) and is_table_line(lines[end]):
                end += 1
            out.append(fit_table(lines[index:end], width, table_keys))
            index = end
            continue
        if line.startswith("- "):
            out.append(wrap_paragraph(line[2:], width, "- ", "  "))
        elif line.strip() and len(line) > width and not line.startswith(CODE_INDENT):
            out.append(wrap_paragraph(line, width))
        else:
            out.append(line)
        index += 1
    return "\n".join(out)


class HelpFormatter(argparse.HelpFormatter):
    """`--help` fitted to the terminal, as argparse sizes it: text wrapped at spaces (never inside a word, a URL or
    a hyphenated path); an indented line of the description or the examples (a command) kept as written, or
    continued with a backslash where it is too long, a trailing `# comment` of it put on the line above."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrap_words(" ".join(text.split()), width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = []
        for line in text.splitlines():
            margin = line[:len(line) - len(line.lstrip())]
            command, _, comment = line.strip().partition("  # ")
            if margin and comment and len(line) > width:  # `command   # what it does`, too long: the comment above
                lines += [f"{margin}# {comment.strip()}", margin + command.strip()]
            else:
                lines.append(line)
        out = []
        for line in lines:
            margin = line[:len(line) - len(line.lstrip())]
            if line.lstrip().startswith("#"):  # an example's comment
                out += wrap_words(line.lstrip()[1:].strip(), width, initial_indent=margin + "# ",
                                  subsequent_indent=margin + "# ")
            elif margin:  # an example's command
                out += continued_command(line, width)
            else:
                out += wrap_words(line, width) or [""]
        return "\n".join(indent + line for line in out)


def continued_command(line: str, width: int) -> list[str]:
    """An indented command line in lines of at most `width` columns, each but the last ending in a backslash (one
    that ends in a backslash already continues as it is; a word longer than the line stays whole)."""
    if len(line) <= width:
        return [line]
    margin = " " * (len(line) - len(line.lstrip()))
    text, continued = (line.strip()[:-1].rstrip(), True) if line.rstrip().endswith("\\") else (line.strip(), False)
    wrapped = wrap_words(text, width - len(margin) - 6)
    return [margin + ("    " if index else "") + part + (" \\" if index < len(wrapped) - 1 or continued else "")
            for index, part in enumerate(wrapped)]


PIPE_CLOSED_EXIT_CODE = 141  # 128 + SIGPIPE, the code a shell reports for a command ended by a closed pipe


def closed_pipe() -> int:
    """What a command does when the reader of its output has gone (`sentsweep list | head -2`): as Python's docs
    advise, standard output pointed at devnull (the interpreter's own flush at exit then finds nothing to write), and
    the shell's code for SIGPIPE returned, to end quietly as a shell tool does."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return PIPE_CLOSED_EXIT_CODE


def say(text: str, stream: TextIO | None = None, table_keys: int = 1) -> None:
    """Print `text` (Markdown: paragraphs, lists, tables) to `stream` (standard output) fitted to its terminal."""
    stream = stream or sys.stdout
    print(fit_markdown(text, terminal_columns(stream), table_keys), file=stream, flush=True)

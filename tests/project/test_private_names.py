"""No module of `sentsweep` imports another module's private name (`_name`): what one module uses of another is
that module's public contract. Every module is read with `ast` (none is imported), its imports at module level and
inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sentsweep"


def private_names_imported(source: str) -> list[str]:
    """`module.name` for each private name the source imports from a `sentsweep` module."""
    return [f"{node.module}.{alias.name}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sentsweep"
            for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]


def test_the_check_finds_a_private_name_imported_at_module_level_or_in_a_function():
    source = ("from sentsweep.analysis.significance import CORRECTIONS, _paired\n"
              "from numpy import _private\n"
              "def f():\n    from sentsweep.data import __version__, _read\n")
    assert private_names_imported(source) == ["sentsweep.analysis.significance._paired", "sentsweep.data._read"]


def test_no_module_imports_a_private_name_of_another():
    found = {str(path.relative_to(PACKAGE.parent)): names for path in sorted(PACKAGE.rglob("*.py"))
             if (names := private_names_imported(path.read_text(encoding="utf-8")))}
    assert found == {}

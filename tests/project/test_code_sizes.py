"""The developers' guide's sizes, read with `ast` from every module of `sentsweep` (none is imported): no class
over 250 lines, no function over 80, and no module directly in `sentsweep/sweep/` but its `__init__` (its modules
sit in the sub-packages `tests/project/test_layers.py` orders)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sentsweep"
MAX_CLASS_LINES = 250
MAX_FUNCTION_LINES = 80


def _definitions():
    """(kind, name, where, lines) of every class and function of the package, nested ones included."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                yield kind, node.name, where, node.end_lineno - node.lineno + 1


def test_no_class_or_function_is_over_its_size():
    limits = {"class": MAX_CLASS_LINES, "function": MAX_FUNCTION_LINES}
    found = list(_definitions())
    assert any(kind == "class" for kind, *_ in found) and any(kind == "function" for kind, *_ in found)
    over = [f"{kind} {name} ({where}): {lines} lines, over {limits[kind]}"
            for kind, name, where, lines in found if lines > limits[kind]]
    assert not over, "\n".join(over) + "\nsplit each into well-named parts"


def test_the_sweep_package_holds_sub_packages_only():
    flat = sorted(path.name for path in (PACKAGE / "sweep").glob("*.py"))
    assert flat == ["__init__.py"], flat
    assert all((folder / "__init__.py").is_file() for folder in (PACKAGE / "sweep").iterdir()
               if folder.is_dir() and folder.name != "__pycache__")

"""The package's import architecture: layers, no cycles, lazy imports only where said, light entry points.

Every module of `sentsweep` is read with `ast` (none is imported) and its first-party imports collected,
those at module level and those inside functions. The rules:

(a) every module belongs to exactly one layer of `LAYERS` (a new module must be placed there);
(b) no module imports a module of a higher layer;
(c) no import cycle between modules;
(d) a first-party import inside a function carries the mark `# lazy: DEPENDENCY[, DEPENDENCY]` on its line or in
    the comment block directly above it (inside the function), naming the heavy third-party packages the import
    keeps out of a light code path (`sentsweep list`, `--help`, `analyze`, a card, a module's import), each one of
    `LAZY_DEPENDENCIES`: that is the only accepted reason to import inside a function. Every `# lazy:` mark in the
    package, on a third-party import too, has that form;
(e) the analysis modules, `python -m sentsweep --help` and `sentsweep analyze --help` never import Ray;
    `sentsweep list` and every sweep script's `--help` import neither Ray nor torch.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import io
import os
import pkgutil
import re
import subprocess
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = "sentsweep"

# Lowest first. An entry is a module prefix: it holds that module and everything below it, except ROOT
# itself and an entry ending in `.__init__`, which stand for a package's own __init__ only.
LAYERS: list[tuple[str, list[str]]] = [
    ("foundation", ["sentsweep.errors", "sentsweep.faults", "sentsweep.plugins", "sentsweep.references",
                    "sentsweep.settings", "sentsweep.registry", "sentsweep.storage", "sentsweep.terminal",
                    "sentsweep.version", "sentsweep.worker_fork"]),
    ("data", ["sentsweep.random_seeds", "sentsweep.data", "sentsweep.demo_data", "sentsweep.noise",
              "sentsweep.topics"]),
    ("modelling", ["sentsweep.models", "sentsweep.hub", "sentsweep.encoding", "sentsweep.bm25_index",
                   "sentsweep.retrieval_metrics", "sentsweep.scorers", "sentsweep.losses", "sentsweep.tasks",
                   "sentsweep.pair_models", "sentsweep.sampling", "sentsweep.query_generation",
                   "sentsweep.distractor_data", "sentsweep.word_relevance"]),
    ("preparation cache", ["sentsweep.preparation_cache"]),
    ("trainables", ["sentsweep.trainables"]),
    ("tracking", ["sentsweep.tracking"]),
    ("analysis", ["sentsweep.analysis", "sentsweep.sweep_result"]),
    # each paper's protocols (`Protocol`, `Sourced`) and the machinery that turns them into Ray Tune / Optuna spaces:
    # below the sweep that runs them and the experiments that declare their stages over them
    ("search spaces", ["sentsweep.search_spaces"]),
    # the sweep's sub-packages, lowest first: what a sweep is, the cluster it asks, what Ray Tune runs, the run,
    # and the launch (the package's own __init__, which imports the entry point, with it)
    ("sweep config", ["sentsweep.sweep.config"]),
    ("sweep compute", ["sentsweep.sweep.compute"]),
    ("sweep search", ["sentsweep.sweep.search"]),
    ("sweep execution", ["sentsweep.sweep.execution"]),
    ("sweep launch", ["sentsweep.sweep.launch", "sentsweep.sweep.__init__"]),
    ("experiments", ["sentsweep.experiments"]),
    ("entry points", ["sentsweep.cli", "sentsweep.__main__", "sentsweep.evaluate", "sentsweep.sweep_rerun",
                      "sentsweep.keyword_options", "sentsweep.api", ROOT]),
]

LAZY_MARK = "lazy:"
# The packages a `# lazy:` mark may name: what a light code path keeps out (rule (d); docs/layout.md)
LAZY_DEPENDENCIES = ("torch", "sentence_transformers", "ray", "mlflow", "optuna", "psutil", "filelock", "pynvml")
LAZY_COMMENT = re.compile(r"#\s*lazy:\s*(?P<names>[\w.]+(?:\s*,\s*[\w.]+)*)\s*$")


def lazy_dependencies(comment: str) -> tuple[str, ...] | None:
    """The packages a `# lazy: a, b` comment names; None where the comment is not exactly that mark."""
    match = LAZY_COMMENT.fullmatch(comment.strip())
    return tuple(name.strip() for name in match["names"].split(",")) if match else None


def is_lazy_mark(comment: str) -> bool:
    """A `# lazy:` mark naming only packages of LAZY_DEPENDENCIES."""
    names = lazy_dependencies(comment)
    return bool(names) and all(name in LAZY_DEPENDENCIES for name in names)


@dataclass(frozen=True)
class Import:
    """One first-party import statement, resolved to the modules it names."""

    importer: str
    line: int
    text: str  # the statement as written
    named: tuple[str, ...]  # the modules written after `import` / `from`, relative ones resolved
    targets: tuple[str, ...]  # the modules whose code it needs run: submodules of `from X import sub` included
    in_function: bool
    comment_ok: bool  # a lazy mark on its line or in the comment block directly above it, inside the function

    @property
    def where(self) -> str:
        return f"{self.importer} line {self.line}: `{self.text}`"


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool


def _walk_modules() -> dict[str, Module]:
    """Every module of the installed package, found the way pkgutil.walk_packages finds them but without
    importing the packages (walk_packages imports each package to read its __path__)."""
    spec = importlib.util.find_spec(ROOT)  # a top-level find_spec imports nothing
    assert spec is not None and spec.submodule_search_locations, f"{ROOT} is not installed as a package"
    modules = {ROOT: Module(ROOT, Path(spec.origin), True)}

    def walk(path: list[str], prefix: str) -> None:
        for info in pkgutil.iter_modules(path, prefix):
            found = info.module_finder.find_spec(info.name)
            if found is None or found.origin is None or not found.origin.endswith(".py"):
                continue
            modules[info.name] = Module(info.name, Path(found.origin), info.ispkg)
            if info.ispkg:
                walk(list(found.submodule_search_locations), info.name + ".")

    walk(list(spec.submodule_search_locations), ROOT + ".")
    return modules


MODULES = _walk_modules()


def _is_first_party(name: str) -> bool:
    return name == ROOT or name.startswith(ROOT + ".")


def _ancestors(name: str) -> list[str]:
    """The packages above `name`, nearest first: sentsweep.a.b -> [sentsweep.a, sentsweep]."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def _comment_lines(source: str) -> dict[int, str]:
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string
    return comments


def _has_lazy_comment(node: ast.stmt, function: ast.AST, lines: list[str], comments: dict[int, str]) -> bool:
    """A lazy mark (`is_lazy_mark`) in a comment on the statement's lines, or in the comment-only lines right above
    it (no blank line between), below the function's `def` line."""
    end = node.end_lineno or node.lineno
    if any(is_lazy_mark(comments.get(line, "")) for line in range(node.lineno, end + 1)):
        return True
    line = node.lineno - 1
    while line > function.lineno and line in comments and lines[line - 1].lstrip().startswith("#"):
        if is_lazy_mark(comments[line]):
            return True
        line -= 1
    return False


def _resolve_relative(importer: str, is_package: bool, level: int, name: str | None) -> str:
    package = importer if is_package else importer.rpartition(".")[0]
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - (level - 1)]) if level > 1 else package
    return f"{base}.{name}" if name else base


def _imports_in_source(importer: str, is_package: bool, source: str, filename: str = "<source>") -> list[Import]:
    """The first-party imports of one module's source, in order."""
    tree = ast.parse(source, filename=filename)
    lines = source.splitlines()
    comments = _comment_lines(source)
    found: list[Import] = []

    def visit(node: ast.AST, function: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, child)
                continue
            named: list[str] = []
            targets: list[str] = []
            if isinstance(child, ast.Import):
                named = targets = [alias.name for alias in child.names if _is_first_party(alias.name)]
            elif isinstance(child, ast.ImportFrom):
                base = (_resolve_relative(importer, is_package, child.level, child.module) if child.level
                        else child.module or "")
                if _is_first_party(base):
                    named = [base]
                    # `from sentsweep.a import b` where b is a submodule imports sentsweep.a.b; it needs
                    # sentsweep.a's own code only for names that are no submodule (or `*`).
                    submodules = [f"{base}.{alias.name}" for alias in child.names if f"{base}.{alias.name}" in MODULES]
                    targets = ([base] if len(submodules) < len(child.names) else []) + submodules
            if named:
                found.append(Import(
                    importer=importer,
                    line=child.lineno,
                    text=" ".join(_statement_text(lines, child).split()),
                    named=tuple(named),
                    targets=tuple(dict.fromkeys(targets)),
                    in_function=function is not None,
                    comment_ok=function is not None and _has_lazy_comment(child, function, lines, comments),
                ))
            visit(child, function)

    visit(tree, None)
    return found


def _statement_text(lines: list[str], node: ast.stmt) -> str:
    """The statement's source, from the module's lines (`ast.get_source_segment` splits the whole source again for
    each statement: seconds for the package's some 700 imports). `ast`'s column offsets count UTF-8 bytes."""
    first, last = (lines[index].encode() for index in (node.lineno - 1, node.end_lineno - 1))
    if node.lineno == node.end_lineno:
        return first[node.col_offset:node.end_col_offset].decode()
    return "\n".join([first[node.col_offset:].decode(), *lines[node.lineno:node.end_lineno - 1],
                      last[:node.end_col_offset].decode()])


def _imports_of(module: Module) -> list[Import]:
    return _imports_in_source(module.name, module.is_package, module.path.read_text(encoding="utf-8"),
                              str(module.path))


@functools.cache
def imports_by_module() -> dict[str, list[Import]]:
    """Every module's first-party imports, read when a test first asks rather than when the file is collected
    (each worker of a parallel run collects every test file, whichever tests it runs)."""
    return {name: _imports_of(module) for name, module in sorted(MODULES.items())}


def _matches(module: str, prefix: str) -> bool:
    if prefix == ROOT:
        return module == ROOT
    if prefix.endswith(".__init__"):
        return module == prefix.removesuffix(".__init__")
    return module == prefix or module.startswith(prefix + ".")


def _layers_of(module: str) -> list[int]:
    return [index for index, (_, prefixes) in enumerate(LAYERS) if any(_matches(module, p) for p in prefixes)]


def _layer_name(index: int) -> str:
    return f"{index} ({LAYERS[index][0]})"


@functools.cache
def edges() -> dict[str, dict[str, Import]]:
    """module -> {imported module: the import that brings it in}.

    Importing sentsweep.a.b runs sentsweep.a's __init__ first, so an import also leads to each package above
    its target, except the packages above the importer itself: those were imported before the importer ran,
    whatever it imports (otherwise every `__init__` that imports its own submodules would be a cycle)."""
    found: dict[str, dict[str, Import]] = {name: {} for name in MODULES}
    for importer, imports in imports_by_module().items():
        own = set(_ancestors(importer))
        for statement in imports:
            for target in statement.targets:
                implied = [parent for parent in _ancestors(target) if parent not in own]
                for module in [target, *implied]:
                    if module != importer and module in MODULES:
                        found[importer].setdefault(module, statement)
    return found


def test_the_walk_found_the_package():
    assert len(MODULES) > 20, sorted(MODULES)
    for name in ("sentsweep", "sentsweep.cli", "sentsweep.analysis.tables", "sentsweep.trainables"):
        assert name in MODULES, f"{name} not found by the walk: {sorted(MODULES)}"


def test_every_first_party_import_names_an_existing_module():
    problems = []
    for imports in imports_by_module().values():
        for statement in imports:
            for named in statement.named:
                if named not in MODULES:
                    problems.append(f"{statement.where} names {named}, which is no module of {ROOT}")
    assert not problems, "\n".join(problems)


def test_every_module_belongs_to_exactly_one_layer():
    problems = []
    for name in MODULES:
        layers = _layers_of(name)
        if not layers:
            problems.append(f"{name} is in no layer: add it (or a prefix of it) to LAYERS in {__file__}")
        elif len(layers) > 1:
            problems.append(f"{name} is in several layers: {', '.join(map(_layer_name, layers))}")
    assert not problems, "\n".join(problems)


def test_no_module_imports_a_higher_layer():
    problems = []
    for importer, targets in edges().items():
        own = _layers_of(importer)
        if len(own) != 1:
            continue  # reported by test_every_module_belongs_to_exactly_one_layer
        for target, statement in targets.items():
            theirs = _layers_of(target)
            if len(theirs) == 1 and theirs[0] > own[0]:
                problems.append(f"{statement.where}: layer {_layer_name(own[0])} imports {target}, "
                                f"of the higher layer {_layer_name(theirs[0])}")
    assert not problems, "\n".join(problems)


def _find_cycles(edges: dict[str, dict[str, Import]]) -> list[tuple[list[str], list[str]]]:
    """(a shortest cycle a -> ... -> a, all its component's modules) for each strongly connected component of
    two or more modules (Tarjan), so that each knot of cycles is reported once, by its shortest cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def connect(node: str) -> None:  # the graph is a few dozen modules: recursion depth is no concern
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(edges):
        if node not in index:
            connect(node)

    def shortest_cycle_through(start: str, members: set[str]) -> list[str]:
        previous: dict[str, str] = {}  # breadth first from start until it is reached again
        frontier = [start]
        while frontier and start not in previous:
            following = []
            for node in frontier:
                for target in sorted(edges[node]):
                    if target in members and target not in previous:
                        previous[target] = node
                        following.append(target)
            frontier = following
        path = [start]
        node = previous[start]
        while node != start:
            path.append(node)
            node = previous[node]
        path.append(start)
        return path[::-1]

    cycles = []
    for component in components:
        members = set(component)
        shortest = min((shortest_cycle_through(node, members) for node in sorted(members)), key=len)
        cycles.append((shortest, sorted(component)))
    return cycles


def test_find_cycles_reports_the_path():
    fake = {"a": {"b": None}, "b": {"c": None}, "c": {"a": None}, "d": {"a": None}}
    assert _find_cycles(fake) == [(["a", "b", "c", "a"], ["a", "b", "c"])]
    knot = {"a": {"b": None}, "b": {"c": None}, "c": {"d": None}, "d": {"a": None, "c": None}}
    assert _find_cycles(knot) == [(["c", "d", "c"], ["a", "b", "c", "d"])]
    assert _find_cycles({"a": {"b": None}, "b": {}}) == []


def test_no_import_cycles():
    messages, graph = [], edges()
    for cycle, component in _find_cycles(graph):
        steps = [f"  {a} -> {b}  ({graph[a][b].where})" for a, b in zip(cycle, cycle[1:])]
        others = sorted(set(component) - set(cycle))
        also = f"\n  (in the same knot of cycles: {', '.join(others)})" if others else ""
        messages.append("import cycle " + " -> ".join(cycle) + ":\n" + "\n".join(steps) + also)
    assert not messages, "\n".join(messages)


def test_imports_inside_functions_say_why():
    problems = [
        f"{statement.where} imports inside a function without a `# {LAZY_MARK} DEPENDENCY` mark"
        for imports in imports_by_module().values() for statement in imports
        if statement.in_function and not statement.comment_ok
    ]
    assert not problems, "\n".join(problems) + (
        f"\nImport these at module level, or, only to keep a heavy dependency out of a light path, name it in a "
        f"mark `# {LAZY_MARK} DEPENDENCY` on the import's line or in the comment lines directly above it, "
        f"DEPENDENCY one of {', '.join(LAZY_DEPENDENCIES)}."
    )


def test_every_lazy_mark_names_only_listed_dependencies():
    """Each `# lazy:` comment in the package is the uniform mark: no free text, no unlisted package."""
    problems = []
    for module in MODULES.values():
        for line, comment in _comment_lines(module.path.read_text(encoding="utf-8")).items():
            if LAZY_MARK in comment and not is_lazy_mark(comment):
                problems.append(f"{module.path} line {line}: {comment.strip()!r}")
    assert not problems, "\n".join(problems) + f"\nexpected `# {LAZY_MARK} ` and some of {LAZY_DEPENDENCIES}"


def test_the_lazy_mark_accepts_listed_dependencies_only():
    assert lazy_dependencies("# lazy: ray, torch") == ("ray", "torch")
    assert is_lazy_mark("  # lazy: mlflow")
    assert not is_lazy_mark("# lazy: keeps Ray out of `sentsweep analyze`")  # free text
    assert not is_lazy_mark("# lazy: pandas")  # not a dependency the light paths keep out
    assert not is_lazy_mark("# lazy:")


def test_lazy_comment_detection():
    source = textwrap.dedent('''
        import sentsweep.errors

        def f():
            # lazy: ray
            # (a second line of the same comment)
            from sentsweep.sweep import run_sweep
            from sentsweep.tracking import store  # lazy: mlflow
            from sentsweep.analysis import cli  # lazy: keeps Ray out

            from sentsweep.tasks import build_task
            if True:
                from sentsweep.trainables import train

        def g():
            """
            # lazy: torch (a docstring line, no comment)
            """
            from sentsweep.noise import delete_words
    ''')
    found = {statement.text: statement for statement in _imports_in_source("sentsweep.fake", False, source)}
    assert not found["import sentsweep.errors"].in_function
    assert found["from sentsweep.sweep import run_sweep"].comment_ok
    assert found["from sentsweep.tracking import store"].comment_ok
    assert found["from sentsweep.tracking import store"].targets == ("sentsweep.tracking.store",)
    assert found["from sentsweep.tasks import build_task"].targets == ("sentsweep.tasks",)
    assert not found["from sentsweep.tasks import build_task"].comment_ok
    assert not found["from sentsweep.analysis import cli"].comment_ok  # free text, no dependency named
    assert not found["from sentsweep.trainables import train"].comment_ok
    assert not found["from sentsweep.noise import delete_words"].comment_ok


# --- (e) the light entry points stay free of Ray ----------------------------------------------------------

def _run(arguments: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *arguments], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})


def _imported_by(importtime_stderr: str) -> set[str]:
    """Module names of `python -X importtime` output ("import time: self | cumulative | name")."""
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def _ray_modules(names) -> list[str]:
    return sorted(name for name in names if name == "ray" or name.startswith("ray."))


ANALYSIS_SCRIPT = """
import sys

import pandas as pd

import sentsweep.analysis.cli, sentsweep.analysis.runs, sentsweep.analysis.tables
from sentsweep.analysis.tables import build_table, to_markdown

rows = []
for method, base in (("mlm", 70.0), ("tsdae", 72.0)):
    for seed in ("0", "1", "2"):
        rows.append({"run_id": f"{method}-{seed}", "status": "FINISHED", "seed": seed, "config_hash": method,
                     "failure_reason": None, "params.method": method, "params.seed": seed,
                     "metrics.sts_test": base + int(seed) / 10})
rows.append({"run_id": "mlm-3", "status": "FAILED", "seed": "3", "config_hash": "mlm", "failure_reason": "oom",
             "params.method": "mlm", "params.seed": "3", "metrics.sts_test": float("nan")})
table = build_table(pd.DataFrame(rows), ["method"], ["sts_test"])
assert table.best == {"sts_test": ("tsdae",)}, table.best
print(to_markdown(table))
print("RAY-IMPORTED:", sorted(m for m in sys.modules if m == "ray" or m.startswith("ray.")))
"""


def test_analysis_tables_do_not_import_ray():
    result = _run(["-c", ANALYSIS_SCRIPT])
    assert result.returncode == 0, f"building a table failed:\n{result.stdout}\n{result.stderr}"
    verdict = [line for line in result.stdout.splitlines() if line.startswith("RAY-IMPORTED:")]
    assert verdict == ["RAY-IMPORTED: []"], (
        "importing sentsweep.analysis.cli/tables/runs and building a table imported Ray:\n" + "\n".join(verdict)
    )


def _console_script() -> list[str]:
    """`sentsweep` as installed next to this interpreter, run by it (so -X importtime applies)."""
    script = Path(sys.executable).parent / "sentsweep"
    return [str(script)] if script.is_file() else ["-m", ROOT]


@pytest.mark.parametrize("command", [["-m", "sentsweep", "--help"], [*_console_script(), "analyze", "--help"]],
                         ids=["python -m sentsweep --help", "sentsweep analyze --help"])
def test_help_does_not_import_ray(command):
    result = _run(["-X", "importtime", *command])
    errors = "\n".join(line for line in result.stderr.splitlines() if not line.startswith("import time:"))
    assert result.returncode == 0, f"`{' '.join(command)}` exited {result.returncode}:\n{result.stdout}\n{errors}"
    assert "usage:" in result.stdout, result.stdout
    imported = _imported_by(result.stderr)
    assert "sentsweep.cli" in imported, "-X importtime listed no sentsweep module: the check saw nothing"
    ray = _ray_modules(imported)
    assert not ray, f"`{' '.join(command)}` imported Ray: {', '.join(ray[:10])}"


def test_help_does_not_import_ray_by_sys_modules():
    """The same, read from sys.modules after the command ran (runpy), in case -X importtime output changes."""
    script = textwrap.dedent("""
        import runpy, sys
        for argv in (["sentsweep", "--help"], ["sentsweep", "analyze", "--help"]):
            sys.argv = argv
            try:
                runpy.run_module("sentsweep", run_name="__main__", alter_sys=True)
                code = 0
            except SystemExit as stop:
                code = stop.code or 0
            ray = sorted(m for m in sys.modules if m.split(".")[0] == "ray")
            print("RESULT:", " ".join(argv), "| exit", code, "| ray", ray)
    """)
    result = _run(["-c", script])
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    verdicts = [line for line in result.stdout.splitlines() if line.startswith("RESULT:")]
    expected = ["RESULT: sentsweep --help | exit 0 | ray []", "RESULT: sentsweep analyze --help | exit 0 | ray []"]
    assert verdicts == expected, "\n".join(verdicts) + "\n" + result.stderr


SWEEP_SCRIPTS = sorted((Path(__file__).resolve().parents[2] / "sweeps").glob("*.py"))

LIGHT_COMMANDS_SCRIPT = """
import contextlib, io, runpy, sys
for argv in [["sentsweep", "list"]] + [[script, "--help"] for script in sys.argv[1:]]:
    sys.argv, output = list(argv), io.StringIO()
    try:
        with contextlib.redirect_stdout(output):
            if argv[0].endswith(".py"):
                runpy.run_path(argv[0], run_name="__main__")
            else:
                runpy.run_module("sentsweep", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:
        code = stop.code or 0
    loaded = [name for name in ("ray", "torch") if name in sys.modules]
    shown = "usage:" in output.getvalue() or "nm_weight" in output.getvalue()
    print("RESULT:", argv[0].rsplit("/", 1)[-1], "| exit", code, "| output", shown, "| loaded", loaded)
"""


def test_list_and_every_sweep_help_import_neither_ray_nor_torch():
    """`sentsweep list`, then each sweeps/<name>.py --help, one after the other in one fresh interpreter: after
    each, neither Ray nor torch is in sys.modules (the first command that loads one is the one named)."""
    assert len(SWEEP_SCRIPTS) > 10, SWEEP_SCRIPTS
    result = _run(["-c", LIGHT_COMMANDS_SCRIPT, *map(str, SWEEP_SCRIPTS)])
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    verdicts = [line for line in result.stdout.splitlines() if line.startswith("RESULT:")]
    expected = [f"RESULT: {name} | exit 0 | output True | loaded []"
                for name in ["sentsweep", *(script.name for script in SWEEP_SCRIPTS)]]
    assert verdicts == expected, "\n".join(verdicts) + "\n" + result.stderr[-3000:]


DRY_RUN_SCRIPT = """
import contextlib, io, runpy, sys
script = sys.argv[1]
for argv in (["--quick", "--dry-run"], ["--quick", "--weights", "-1"]):
    sys.argv, output = [script, *argv], io.StringIO()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as stop:
        code = stop.code
    loaded = [name for name in ("ray", "mlflow") if name in sys.modules]
    print("RESULT:", " ".join(argv), "| exit", code, "| card", "| setting | value | source |" in output.getvalue(),
          "| loaded", loaded)
"""


def test_a_dry_run_and_a_refused_value_import_neither_ray_nor_mlflow():
    """`--dry-run` prints the card and a value out of range is refused (exit 2) without loading Ray or MLflow:
    they load once a sweep runs."""
    result = _run(["-c", DRY_RUN_SCRIPT, str(Path(__file__).resolve().parents[2] / "sweeps" / "nm_weight.py")])
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    verdicts = [line for line in result.stdout.splitlines() if line.startswith("RESULT:")]
    assert verdicts == ["RESULT: --quick --dry-run | exit 0 | card True | loaded []",
                        "RESULT: --quick --weights -1 | exit 2 | card False | loaded []"], "\n".join(verdicts)


def test_relative_imports_resolve():
    source = "from . import common\nfrom .common import x\nfrom .. import errors\n"
    found = _imports_in_source("sentsweep.tasks.sts", False, source)
    assert [statement.named for statement in found] == [("sentsweep.tasks",), ("sentsweep.tasks.common",),
                                                        ("sentsweep",)]
    assert found[0].targets == ("sentsweep.tasks.common",)
    assert found[2].targets == ("sentsweep.errors",)
    assert _imports_in_source("sentsweep.tasks", True, "from .sts import y\n")[0].named == ("sentsweep.tasks.sts",)


def test_the_layout_maps_each_name_of_the_design_to_code_that_exists():
    """docs/layout.md gives each name of the design (sweeps, experiments, search_spaces, protocols, published values,
    trainables, analysis, tests) a row whose paths exist (`<paper>` and `<name>` standing for nm_weight's)."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "layout.md").read_text(encoding="utf-8")
    section = text.split("The design's names", 1)[1].split("\n\n", 2)[1]
    rows = {cells[0].strip("` "): cells[2] for cells in
            (line.strip("|").split(" | ") for line in section.splitlines()[2:])}
    assert list(rows) == ["sweeps", "experiments", "search_spaces", "protocols", "published values", "trainables",
                          "analysis", "tests"]
    for name, where in rows.items():
        paths = [path.replace("<name>", "nm_weight").replace("<paper>", "reiml_2023")
                 for path in re.findall(r"`([\w/<>.-]+/(?:[\w<>.-]+)?)`", where)]
        assert paths, name
        assert all((root / path).exists() for path in paths), (name, [p for p in paths if not (root / p).exists()])

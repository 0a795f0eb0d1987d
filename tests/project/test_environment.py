"""The lock (constraints.txt) and pyproject.toml agree, the environment running the tests is the locked one, and
every place that installs the project installs from the lock."""

from __future__ import annotations

import re
import shlex
import tomllib
from importlib import metadata

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.helpers.cluster_helpers import PROJECT

PYPROJECT = tomllib.loads((PROJECT / "pyproject.toml").read_text())
LOCK_TEXT = (PROJECT / "constraints.txt").read_text()
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][A-Za-z0-9.+!-]*)$")


def locked() -> dict[str, str]:
    """{canonical name: version} of constraints.txt, whose lines are comments or `name==version`."""
    pins = {}
    for line in LOCK_TEXT.splitlines():
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"constraints.txt: {line!r} is not name==version"
        name = canonicalize_name(match[1])
        assert name not in pins, f"constraints.txt pins {name} twice"
        pins[name] = match[2]
    return pins


def project_requirements() -> list[Requirement]:
    """The dependencies of pyproject.toml and of each of its extras."""
    project = PYPROJECT["project"]
    texts = project["dependencies"] + [text for extra in project["optional-dependencies"].values() for text in extra]
    return [Requirement(text) for text in texts]


def test_every_requirement_of_pyproject_is_locked_at_a_version_it_allows():
    pins = locked()
    for requirement in project_requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} (pyproject.toml) has no pin in constraints.txt"
        assert requirement.specifier.contains(pins[name], prereleases=True), \
            f"constraints.txt pins {name}=={pins[name]}, which pyproject.toml's {requirement} refuses"


def installed_closure() -> dict[str, str]:
    """{canonical name: installed version} of every installed package pyproject.toml's requirements (all extras)
    bring in, followed through the installed packages' own requirements (those whose markers hold here)."""
    found: dict[str, str] = {}
    pending = project_requirements()
    visited = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(requirement.extras))
        if key in visited:
            continue
        visited.add(key)
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an extra not installed here (gpu, postgres): the lock is checked against pyproject only
        found[name] = distribution.version
        for text in distribution.requires or []:
            needed = Requirement(text)
            environments = [{"extra": extra} for extra in ("", *requirement.extras)]
            if needed.marker is None or any(needed.marker.evaluate(env) for env in environments):
                pending.append(needed)
    return found


def test_the_environment_running_the_tests_has_every_package_at_its_locked_version():
    pins = locked()
    for name, version in installed_closure().items():
        assert name in pins, f"{name} {version} is installed as a requirement of sentsweep but not in constraints.txt"
        assert Version(version).public == Version(pins[name]).public, \
            f"{name} is {version} here, {pins[name]} in constraints.txt: reinstall (make install) or update the lock"


def test_requires_python_and_ruffs_target_are_the_python_the_lock_is_made_for():
    (python,) = re.findall(r"with Python (3\.\d+)", LOCK_TEXT)
    assert PYPROJECT["project"]["requires-python"] == f">={python}"
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py" + python.replace(".", "")


def pip_installs(commands: list[str]) -> list[list[str]]:
    """The arguments of each `pip install` in `commands` (shell lines, several per line with && or ;, quoted
    arguments kept whole, comments left out)."""
    installs = []
    for command in commands:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token not in (";", "&&", "||"):
                words.append(token)
                continue
            if "pip" in words and "install" in words:
                installs.append(words[words.index("install") + 1:])
            words = []
    return installs


@pytest.mark.parametrize("path", ["cluster.yaml", "cluster-onprem.yaml"])
def test_the_cluster_configs_install_the_project_and_torch_from_the_lock(path):
    config = yaml.safe_load((PROJECT / path).read_text())
    installs = [words for words in pip_installs(config["setup_commands"]) if "pip" not in words]  # not pip itself
    assert any("-e" in words for words in installs), f"{path} does not install the project"
    for words in installs:
        assert "-c" in words and words[words.index("-c") + 1] == "~/sentsweep/constraints.txt", \
            f"{path}: `pip install {' '.join(words)}` does not install from the lock"


def test_make_install_installs_torch_and_the_project_from_the_lock():
    recipe = (PROJECT / "Makefile").read_text().split("$(STAMP): ", 1)[1].split("\n\n", 1)[0]
    installs = [words for words in pip_installs(recipe.splitlines()) if "pip" not in words]
    assert [words[-1] for words in installs] == ["torch", ".[dev,postgres,mteb,pos]"]
    assert all(words[words.index("-c") + 1] == "constraints.txt" for words in installs)

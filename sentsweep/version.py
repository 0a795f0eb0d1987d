"""The version of the code a run was made with, for the `code_version` tag of every MLflow run."""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path


def code_version(directory: str | Path | None = None) -> str:
    """The git commit of the working directory's checkout (with '-dirty' for uncommitted changes to tracked
    files); outside a checkout, the installed package's version ('sentsweep 0.1.0'); else 'unknown'."""
    try:
        run = dict(cwd=directory or Path.cwd(), capture_output=True, text=True, check=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], **run).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], **run).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        pass
    try:
        return f"sentsweep {metadata.version('sentsweep')}"
    except metadata.PackageNotFoundError:
        return "unknown"


def version_line() -> str:
    """`sentsweep --version`: the installed version and, for a git checkout (an editable install), the commit of the
    code ('sentsweep 0.1.0 (commit 3f2a1bc)'; '-dirty' with uncommitted changes)."""
    try:
        version = metadata.version("sentsweep")
    except metadata.PackageNotFoundError:
        version = "(not installed)"
    package = Path(__file__).resolve().parent
    try:
        run = dict(cwd=package, capture_output=True, text=True, check=True)
        top = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], **run).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        return f"sentsweep {version}"
    if top != package.parent:  # the package inside some other repository (a vendored copy): no commit of its own
        return f"sentsweep {version}"
    return f"sentsweep {version} (commit {code_version(package)})"

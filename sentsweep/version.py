"""The code a run was made with: sentsweep's version and commit, for the `code_version` tag and the provenance
tags of every MLflow run (`sentsweep.tracking.provenance`).

The commit is read where the running package itself comes from, never from the working directory (a sweep file
of one's own runs from any folder, often another git checkout):

1. the git checkout that holds the imported `sentsweep` package (an editable install, `pip install -e .`, as
   `make install`, both cluster configs and the SLURM script make it), with `dirty` when a tracked file differs
   from that commit (`git status --porcelain --untracked-files=no`);
2. else pip's record of an install from a git URL (`pip install git+https://...@COMMIT`: the distribution's
   `direct_url.json`, PEP 610), whose tree is the commit's (`dirty` false);
3. else none (a wheel or sdist built elsewhere): the version alone, and `code_version` says so.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

PACKAGE_FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class CodeVersion:
    """sentsweep as installed: its version, the commit it was installed from, whether the checkout differs from
    that commit (None: not known, no checkout), and where the commit was read."""

    version: str
    commit: str | None
    dirty: bool | None
    commit_source: str

    def label(self) -> str:
        """'edee0a5' or 'edee0a5-dirty' (the commit's first 7 hex digits); 'sentsweep 0.1.0 (commit unknown)'
        without a commit."""
        if self.commit is None:
            return f"sentsweep {self.version} (commit unknown)"
        return self.commit[:7] + ("-dirty" if self.dirty else "")


def _git(folder: Path, *arguments: str) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(folder), *arguments], capture_output=True, text=True, check=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _checkout_commit(package_folder: Path) -> tuple[str, bool] | None:
    """(commit, dirty) of the git checkout whose work tree holds `package_folder`, if any."""
    top = _git(package_folder, "rev-parse", "--show-toplevel")
    if not top or not package_folder.is_relative_to(Path(top).resolve()):
        return None
    commit = _git(package_folder, "rev-parse", "HEAD")
    if not commit:
        return None
    return commit, bool(_git(package_folder, "status", "--porcelain", "--untracked-files=no"))


def _pip_vcs_commit() -> str | None:
    """The commit pip recorded for an install from a git URL (direct_url.json's vcs_info.commit_id)."""
    try:
        text = metadata.distribution("sentsweep").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        return json.loads(text or "{}").get("vcs_info", {}).get("commit_id")
    except ValueError:
        return None


def read_code_version(package_folder: Path = PACKAGE_FOLDER) -> CodeVersion:
    """sentsweep's version and commit as the module docstring says, for the package at `package_folder`."""
    try:
        version = metadata.version("sentsweep")
    except metadata.PackageNotFoundError:
        version = "unknown"
    checkout = _checkout_commit(package_folder)
    if checkout is not None:
        return CodeVersion(version, checkout[0], checkout[1], f"git checkout {package_folder.parent}")
    commit = _pip_vcs_commit()
    if commit:
        return CodeVersion(version, commit, False, "pip's direct_url.json (installed from a git URL)")
    return CodeVersion(version, None, None, "none: installed from a wheel or sdist without its checkout")


@lru_cache(maxsize=1)
def sentsweep_code() -> CodeVersion:
    """`read_code_version` of the running package, once per process."""
    return read_code_version()


def code_version() -> str:
    """The running sentsweep's `CodeVersion.label`."""
    return sentsweep_code().label()


def version_line() -> str:
    """`sentsweep --version`: the installed version and the commit of the code ('sentsweep 0.1.0 (commit 3f2a1bc)';
    '-dirty' with uncommitted changes; `code_version`'s words where no commit is known)."""
    code = sentsweep_code()
    return f"sentsweep {code.version} (commit {code.label()})" if code.commit else code.label()

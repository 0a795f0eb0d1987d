"""Where an MTEB task's data is on a machine without the hub: a local copy of the task's Hugging Face dataset
repository at the task's revision, found and checked before anything runs (no `mteb` import here).

An MTEB task names its data as `metadata.dataset = {"path": "mteb/stsbenchmark-sts", "revision": "b0fddb..."}`:
a dataset repository on the Hugging Face hub at one commit. `--eval-task mteb:STSBenchmark=FOLDER` accepts as
FOLDER any of the ways that repository reaches an offline cluster, and learns the revision it holds from it:

- a Hugging Face hub cache (`HF_HUB_CACHE`, or `HF_HOME` holding `hub/`), as `huggingface_hub` fills it on a
  machine with internet (`hf download mteb/stsbenchmark-sts --repo-type dataset --revision REV`, or a first
  `mteb.evaluate` there) and as it is copied over: `datasets--mteb--stsbenchmark-sts/snapshots/<revision>/`; the
  repository's own cache folder or one snapshot folder in it is accepted too;
- a folder written by `hf download ... --local-dir FOLDER`: the repository's files, with the commit each came from
  in `FOLDER/.cache/huggingface/download/<file>.metadata` (first line), which `huggingface_hub` writes there;
- a `git clone` of the repository (`.git/HEAD`, resolved through `refs/` or `packed-refs`).

The revision found must be the task's (MTEB pins it: its published scores are for that data); another revision,
another repository in a hub cache, or a folder that is none of the three is refused before launch, naming what
differs. Whether the files have the layout the task reads is checked by loading them with MTEB's own loader
(`sentsweep.tasks.mteb_tasks`). The folder's content digest (sha256 over its files' relative names and sha256s,
sorted, leaving out the `.cache/` and `.git/` bookkeeping) is what a run records beside the revision.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from sentsweep.errors import InputError

COMMIT = re.compile(r"^[0-9a-f]{40}$")
LOCAL_DIR_METADATA = Path(".cache") / "huggingface" / "download"  # huggingface_hub's `--local-dir` bookkeeping
BOOKKEEPING = (".cache", ".git")  # folders of a copy that are not the dataset's files
CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class TaskData:
    """A task's dataset repository on this machine: the `folder` holding its files at `revision`, how it was found
    (`source`) and the sha256 `digest` of its files."""

    repository: str
    revision: str
    folder: Path
    source: str
    digest: str


def hub_cache_folder(repository: str) -> str:
    """The folder name `huggingface_hub` gives a dataset repository in its cache: 'datasets--mteb--scifact'."""
    return "datasets--" + repository.replace("/", "--")


def resolve_task_data(label: str, repository: str, revision: str, path: str | Path) -> TaskData:
    """The files of dataset `repository` at `revision` under `path` (see the module docstring); an `InputError`
    naming `label` and what differs otherwise."""
    path = Path(path).expanduser()
    if not path.is_dir():
        raise InputError(f"{label}: folder not found: {path}")
    folder, found, source = _in_hub_cache(label, repository, revision, path) or _revision_of_copy(path)
    if found is None:
        raise InputError(
            f"{label}: cannot tell which revision of {repository} {path} holds (it is no hub cache, no `hf download "
            f"--local-dir` folder and no git clone); fetch it where the hub is reachable with: hf download "
            f"{repository} --repo-type dataset --revision {revision} --local-dir {path}")
    if found != revision:
        raise InputError(f"{label}: {path} holds {repository} at revision {found} ({source}), but the task reads "
                         f"revision {revision}")
    return TaskData(repository, revision, folder, source, folder_digest(folder))


def _in_hub_cache(label: str, repository: str, revision: str, path: Path) -> tuple[Path, str, str] | None:
    """(snapshot folder, revision, source) where `path` is a hub cache, the repository's cache folder or one of its
    snapshots; None where it is none of them."""
    wanted = hub_cache_folder(repository)
    if path.parent.name == "snapshots" and path.parent.parent.name.startswith("datasets--"):
        if path.parent.parent.name != wanted:
            raise InputError(f"{label}: {path} is a snapshot of {_repository_of(path.parent.parent.name)} in a hub "
                             f"cache, not of {repository}")
        return path, path.name, "a snapshot folder of a hub cache"
    if path.name.startswith("datasets--") and (path / "snapshots").is_dir():
        repository_folder = path
        if path.name != wanted:
            raise InputError(f"{label}: {path} is the hub cache folder of {_repository_of(path.name)}, not of "
                             f"{repository} ({wanted})")
    else:
        roots = [root for root in (path, path / "hub") if root.is_dir() and any(root.glob("datasets--*"))]
        if not roots:
            return None
        repository_folder = roots[0] / wanted
        if not repository_folder.is_dir():
            held = sorted(_repository_of(folder.name) for folder in roots[0].glob("datasets--*"))
            raise InputError(f"{label}: the hub cache {roots[0]} has no {repository} (no {wanted}; it holds "
                             f"{', '.join(held[:5])}{' ...' if len(held) > 5 else ''})")
    snapshot = repository_folder / "snapshots" / revision
    if not snapshot.is_dir():
        held = sorted(folder.name for folder in (repository_folder / "snapshots").glob("*") if folder.is_dir())
        raise InputError(f"{label}: the hub cache {repository_folder.parent} holds {repository} at revision(s) "
                         f"{', '.join(held) or 'none'}, not at the task's revision {revision}")
    return snapshot, revision, "a hub cache"


def _repository_of(cache_folder_name: str) -> str:
    return cache_folder_name.removeprefix("datasets--").replace("--", "/", 1)


def _revision_of_copy(path: Path) -> tuple[Path, str | None, str]:
    """(path, the revision its bookkeeping names or None, source) of an `hf download --local-dir` folder or a git
    clone."""
    metadata = sorted((path / LOCAL_DIR_METADATA).rglob("*.metadata"))
    if metadata:
        commits = {file.read_text(encoding="utf-8").split("\n", 1)[0].strip() for file in metadata}
        if len(commits) > 1:
            raise InputError(f"{path}: its files come from several revisions ({', '.join(sorted(commits))}; "
                             f"{LOCAL_DIR_METADATA}/*.metadata): download the task's revision again")
        return path, commits.pop(), "an `hf download --local-dir` folder"
    if (path / ".git").exists():
        return path, git_head(path / ".git"), "a git clone"
    return path, None, ""


def git_head(git_folder: Path) -> str | None:
    """The commit a git clone has checked out (HEAD, a branch's ref resolved through refs/ or packed-refs)."""
    if git_folder.is_file():  # a worktree or submodule: "gitdir: <path>"
        git_folder = (git_folder.parent / git_folder.read_text().split(":", 1)[1].strip()).resolve()
    head = (git_folder / "HEAD").read_text(encoding="utf-8").strip() if (git_folder / "HEAD").is_file() else ""
    if COMMIT.match(head):
        return head
    ref = head.removeprefix("ref:").strip()
    if ref and (git_folder / ref).is_file():
        return (git_folder / ref).read_text(encoding="utf-8").strip()
    packed = git_folder / "packed-refs"
    if ref and packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            commit, _, name = line.partition(" ")
            if name == ref:
                return commit
    return None


def folder_digest(folder: Path) -> str:
    """sha256 over the dataset's files under `folder` (symbolic links followed, as a hub cache's snapshot holds
    them): each file's relative name and the sha256 of its bytes, in sorted order; `.cache/` and `.git/` left out."""
    digest = hashlib.sha256()
    files = sorted(file for file in folder.rglob("*")
                   if file.is_file() and file.relative_to(folder).parts[0] not in BOOKKEEPING)
    for file in files:
        content = hashlib.sha256()
        with file.open("rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                content.update(chunk)
        digest.update(f"{file.relative_to(folder).as_posix()}\0{content.hexdigest()}\n".encode())
    return digest.hexdigest()

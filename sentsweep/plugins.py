"""A researcher's own code in a sweep: the files and modules outside sentsweep that register objectives, methods
or evaluation tasks, brought to every Ray worker that runs a trial.

The registries (`sentsweep.registry`) are filled where code is imported. A driver imports the researcher's code
(its own sweep file, run as `python my_sweep.py` or `sentsweep run my_sweep.py`, and the modules named with
`--plugin`), but a Ray worker imports only sentsweep: without more, every trial of an objective of one's own
fails there with "unknown method". So:

1. the driver lists the code of its own that registered entries (`user_modules`: each module's name, file and
   content digest) and puts that list in every trial's config (`USER_CODE_KEY`);
2. Ray's runtime environment carries those files to every node (`py_modules`: a file, or a package's folder), so a
   node whose disk lacks them (another machine of the cluster) gets them from the driver's copy;
3. each worker imports them by name before it resolves a trial (`import_user_modules`), checking the digest, so
   a trial never runs other code than the driver's.

A file run as the driver's `__main__` is imported in the workers under its file name (`my_sweep`): code that
starts the sweep must stay under `if __name__ == "__main__":`, as Python's own scripts do.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

from sentsweep.errors import InputError
from sentsweep.registry import Registry

USER_CODE_KEY = "user_code"  # the trial config's list of the researcher's modules (bookkeeping, not a setting)
_PACKAGE_DIR = str(Path(__file__).resolve().parent) + "/"  # sentsweep's own code, left out of a failure's place


@dataclass(frozen=True)
class UserModule:
    """A module of the researcher's own: the name a worker imports, where the driver read it, its digest."""

    name: str
    path: str  # a .py file, or a package's folder
    digest: str

    def as_config(self) -> dict:
        return asdict(self)


def code_digest(path: str | Path) -> str:
    """SHA-256 (first 12 hex digits) of a file's content, or of a package folder's .py files and their names."""
    path = Path(path)
    digest = hashlib.sha256()
    for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
        digest.update(str(file.relative_to(path)).encode() if path.is_dir() else b"")
        digest.update(file.read_bytes())
    return digest.hexdigest()[:12]


def load_user_file(path: str | Path) -> ModuleType:
    """Import the Python file `path` as the module named by its file name (once); a file that does not import
    (a syntax error, a missing package, an error at import) is an `InputError` naming the file and line."""
    path = Path(path).resolve()
    if not path.is_file() or path.suffix != ".py":
        raise InputError(f"{path}: no such Python file")
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() == path:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as error:
        del sys.modules[name]
        raise _import_failure(str(path), error) from None
    return module


def import_plugin(name_or_path: str) -> ModuleType:
    """A `--plugin` value: a .py file, or a module importable by name; an `InputError` naming what failed."""
    if name_or_path.endswith(".py") or Path(name_or_path).is_file():
        return load_user_file(name_or_path)
    try:
        return importlib.import_module(name_or_path)
    except ModuleNotFoundError as error:
        if error.name == name_or_path.split(".")[0]:
            raise InputError(f"--plugin {name_or_path!r}: no such module on the Python path ({sys.path[0] or '.'} "
                             "and the installed packages) nor file") from None
        raise _import_failure(name_or_path, error) from None
    except BaseException as error:
        raise _import_failure(name_or_path, error) from None


def _import_failure(what: str, error: BaseException) -> InputError:
    """An import's error as one line: the file and line in the researcher's code where it happened, and why."""
    if isinstance(error, InputError):  # as raised, where it names the file (a colliding name does)
        return error if Path(what).name in str(error) else InputError(f"{what}: {error}")
    if isinstance(error, SyntaxError):
        return InputError(f"{error.filename}, line {error.lineno}: {type(error).__name__}: {error.msg}")
    where = place_in_own_code(error)
    return InputError(f"{what} does not import: {where + ': ' if where else ''}{type(error).__name__}: {error}")


def place_in_own_code(error: BaseException) -> str | None:
    """'FILE, line N' of the innermost frame of `error`'s traceback in the researcher's code (not sentsweep's, an
    installed package's or Python's import machinery), or None."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.startswith(_PACKAGE_DIR) and "site-packages" not in frame.filename
              and "importlib" not in frame.filename]
    return f"{frames[-1].filename}, line {frames[-1].lineno}" if frames else None


def user_modules() -> list[UserModule]:
    """The modules outside sentsweep that registered an entry in any registry, as workers import them: a file run
    as `__main__` by its file name, a module of a package as its top-level package (folder)."""
    origins = {registry.origin(name) for registry in Registry.instances for name in registry.names()}
    modules: dict[str, UserModule] = {}
    for origin in sorted(origins):
        top = origin.split(".")[0]
        if top == "sentsweep":
            continue
        module = sys.modules.get(top)
        path = getattr(module, "__file__", None)
        if module is None or path is None:
            raise InputError(f"entries registered by module {origin!r}, which has no file to send to the workers")
        if hasattr(module, "__path__"):  # a package: its folder
            path = str(Path(path).parent)
        name = Path(path).stem if top == "__main__" else top
        modules[name] = UserModule(name, str(Path(path).resolve()), code_digest(path))
    return list(modules.values())


def import_user_modules(modules: list[dict]) -> None:
    """In a worker: import the researcher's modules a trial's config lists (`USER_CODE_KEY`), once per process,
    refusing a copy whose digest differs from the driver's."""
    for entry in modules:
        try:
            module = importlib.import_module(entry["name"])
        except ModuleNotFoundError as error:
            if error.name != entry["name"]:
                raise
            raise ModuleNotFoundError(
                f"the sweep's module {entry['name']!r} ({entry['path']} on the driver) is not on this worker's Python "
                "path: the driver sends it in Ray's runtime environment (py_modules); was Ray started otherwise?",
                name=entry["name"]) from None
        path = Path(module.__file__).parent if hasattr(module, "__path__") else Path(module.__file__)
        if code_digest(path) != entry["digest"]:
            raise RuntimeError(f"module {entry['name']!r} on this worker ({path}) is not the driver's "
                               f"(digest {code_digest(path)}, the driver's {entry['digest']})")

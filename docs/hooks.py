"""MkDocs hook: the site's home page is the repository's README.md, so the README and the site's front door are
one text. Its links to `docs/<page>` are rewritten to `<page>`, which is where the page sits in the site. And the
API reference (api.md, generated from the docstrings) documents every public name: a name of `sentsweep.__all__`
without a docstring fails the build."""

import re
import sys
from pathlib import Path

import griffe
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

DOCS_LINK = re.compile(r"\]\(docs/")


def home_page(readme: str) -> str:
    """The README's text with its links into docs/ made relative to the docs folder."""
    return DOCS_LINK.sub("](", readme)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    readme = Path(config.config_file_path).parent / "README.md"
    files.append(File.generated(config, "index.md", content=home_page(readme.read_text(encoding="utf-8"))))
    return files


def undocumented_public_names(package: str, search_paths: list[str]) -> list[str]:
    """The names of `package.__all__` whose object has no docstring, read as the API reference reads them (griffe,
    statically: nothing is imported)."""
    loaded = griffe.load(package, search_paths=search_paths, resolve_aliases=True)
    return [name for name in loaded.exports or () if not loaded[str(name)].docstring]


def refuse_undocumented(package: str, search_paths: list[str]) -> None:
    """A `PluginError` (the build fails) naming the names of `package.__all__` without a docstring."""
    missing = undocumented_public_names(package, search_paths)
    if missing:
        raise PluginError(f"the public name(s) {', '.join(missing)} of {package}.__all__ have no docstring: the API "
                          "reference (docs/api.md) documents every public name")


def on_pre_build(config: MkDocsConfig) -> None:
    refuse_undocumented("sentsweep", [str(Path(config.config_file_path).parent), *sys.path])

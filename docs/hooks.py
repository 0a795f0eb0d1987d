"""MkDocs hook: the site's home page is the repository's README.md, so the README and the site's front door are
one text. Its links to `docs/<page>` are rewritten to `<page>`, which is where the page sits in the site."""

import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

DOCS_LINK = re.compile(r"\]\(docs/")


def home_page(readme: str) -> str:
    """The README's text with its links into docs/ made relative to the docs folder."""
    return DOCS_LINK.sub("](", readme)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    readme = Path(config.config_file_path).parent / "README.md"
    files.append(File.generated(config, "index.md", content=home_page(readme.read_text(encoding="utf-8"))))
    return files

"""The documentation: the README stays a front door, the site (mkdocs.yml, README.md as its home, docs/ as its
pages) builds strictly, a broken link or a page left out of the navigation fails that build, and the docs'
commands that are cheap and deterministic run as written."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cluster_helpers import driver_environment
from tests.helpers.forked_python import run_python

ROOT = Path(__file__).resolve().parents[2]
README_LIMIT_BYTES = 12 * 1024
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCK = re.compile(r"^```(?:bash|sh|shell)\n(.*?)^```", re.S | re.M)


# The theme's end-of-life notice off, as `make docs` has it (the switch the notice names); nothing else is hidden
QUIET_THEME = {"NO_MKDOCS_2_WARNING": "1"}


def build_site(config_dir: Path, site_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(config_dir / "mkdocs.yml"), "--site-dir", str(site_dir)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **QUIET_THEME})


def copy_of_the_site_sources(tmp_path: Path) -> Path:
    copy = tmp_path / "sources"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy)
    shutil.copy(ROOT / "README.md", copy)
    shutil.copytree(ROOT / "docs", copy / "docs")
    return copy


def test_the_readme_is_at_most_12_kib():
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_LIMIT_BYTES, f"README.md is {size} bytes; move detail into a docs/ page"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `make docs` builds it (strictly), once for the tests that read it; built from a copy of its
    sources, which shows that such a copy builds as the sources do (`broken_build` breaks another copy)."""
    folder = tmp_path_factory.mktemp("site")
    built = build_site(copy_of_the_site_sources(folder), folder / "site")
    assert built.returncode == 0, built.stderr
    # a clean build: MkDocs' own INFO lines only, no notice or warning of any plugin or theme
    assert [line for line in built.stderr.splitlines() if line.strip() and not line.startswith("INFO")] == []
    return folder / "site"


def test_the_strict_build_succeeds_with_the_readme_as_home_and_its_docs_links_rewritten(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "The two commands" in home
    assert 'href="analysis/"' in home  # README's docs/analysis.md, as the site serves it
    assert (site / "fault_tolerance" / "index.html").exists()


# What a page fetches by itself: the src of scripts, images, frames and media, a <link>'s href (style sheets, icons,
# preloads, fonts), and url(...) / @import in style sheets and style attributes. Links a reader follows (<a href>) are
# not assets.
ASSET_REFERENCES = [
    re.compile(r"<(?:script|img|iframe|source|audio|video|embed|track)\b[^>]*?\bsrc\s*=\s*[\"']?((?:https?:)?//[^\"'\s>]+)",
               re.I),
    re.compile(r"<link\b[^>]*?\bhref\s*=\s*[\"']?((?:https?:)?//[^\"'\s>]+)", re.I),
    re.compile(r"url\(\s*[\"']?((?:https?:)?//[^\"')\s]+)", re.I),
    re.compile(r"@import\s+[\"']((?:https?:)?//[^\"']+)", re.I),
]


def external_assets(text: str) -> list[str]:
    return [match for pattern in ASSET_REFERENCES for match in pattern.findall(text)]


def test_the_asset_check_finds_what_a_page_would_fetch_from_elsewhere():
    page = ('<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
            '<script src="//cdn.example.org/x.js"></script><img alt="" src="images/a.png">'
            '<a href="https://arxiv.org/abs/2104.06979">TSDAE</a><style>b{background:url("http://x/y.png")}</style>')
    assert external_assets(page) == ["//cdn.example.org/x.js", "https://fonts.googleapis.com/css?family=Roboto",
                                     "http://x/y.png"]


def test_the_site_serves_every_asset_itself_so_it_works_offline(site):
    """No page or style sheet of the built site fetches anything from another host (fonts, scripts, highlighting):
    the site works offline and makes no request elsewhere."""
    found = {}
    for path in [*site.rglob("*.html"), *site.rglob("*.css")]:
        references = external_assets(path.read_text(encoding="utf-8", errors="replace"))
        if references:
            found[str(path.relative_to(site))] = references
    assert found == {}
    assert len(list(site.rglob("*.html"))) > 15
    # the theme's script fetches two things from unpkg.com, only when a page needs them: Mermaid for a diagram
    # (none here) and a ResizeObserver polyfill for browsers without one (every current browser has it)
    assert not [path for path in site.rglob("*.html") if 'class="mermaid"' in path.read_text(encoding="utf-8")]


def test_the_theme_has_a_navigation_tree_copy_buttons_and_a_dark_mode(site):
    page = (site / "analysis" / "index.html").read_text(encoding="utf-8")
    assert 'class="md-nav' in page and "Results" in page  # Material's navigation, with its sections
    assert "content.code.copy" in page  # a copy button on each code block
    assert 'data-md-color-scheme="slate"' in page  # the dark palette, one toggle away


def test_the_readmes_tables_are_tables_on_the_home_page(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    tables = re.findall(r"<table>.*?</table>", home, re.S)
    assert any("noise_ratio" in table and "sts_test_at_best_dev" in table for table in tables)
    assert "| noise_ratio |" not in home  # no table left as text in a code block


BREAKAGES = {
    "broken link": (lambda docs: (docs / "cache.md").open("a").write("\nSee [the missing page](missing.md).\n"),
                    "missing.md"),
    "broken anchor": (lambda docs: (docs / "cache.md").open("a").write(
        "\nSee [a section](analysis.md#no-such-section).\n"), "no-such-section"),
    "page not in nav": (lambda docs: (docs / "orphan.md").write_text("# A page left out of the navigation\n"),
                        "orphan.md"),
    "README link to a missing page": (lambda docs: (docs.parent / "README.md").open("a").write(
        "\n[Gone](docs/gone.md)\n"), "gone.md"),
}


@pytest.fixture(scope="module")
def broken_build(site, tmp_path_factory) -> subprocess.CompletedProcess:
    """The strict build of a copy of the site's sources with every breakage of BREAKAGES at once (an intact copy
    builds cleanly: `site`): the build names each in a warning of its own, so one build shows whether each is
    caught."""
    folder = tmp_path_factory.mktemp("broken-site")
    sources = copy_of_the_site_sources(folder)
    for breakage, _ in BREAKAGES.values():
        breakage(sources / "docs")
    return build_site(sources, folder / "broken")


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_the_strict_build_fails_on_a_broken_link_or_a_page_left_out(broken_build, breakage):
    named = BREAKAGES[breakage][1]
    assert broken_build.returncode != 0
    messages = re.split(r"^(?=INFO|WARNING|ERROR)", broken_build.stderr, flags=re.MULTILINE)  # some span lines
    assert any(message.startswith("WARNING") and named in message for message in messages), broken_build.stderr


def shell_commands(text: str) -> list[str]:
    """The commands of a Markdown text's shell blocks: continued lines joined, comments and blank lines dropped."""
    commands = []
    for block in SHELL_BLOCK.findall(text):
        joined = re.sub(r"\s*\\\n\s*", " ", block)
        for line in joined.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def runnable_form(command: str) -> list[str] | None:
    """The argv a test runs for a docs command, or None for one it leaves to the reader.

    Run: `sentsweep list`, any `--help`, `--dry-run` cards, and the sweeps on `--quick` (the shipped demo data) in
    their dry-run form. Left: real training on the reader's own data and models, analysis of their MLflow runs."""
    words = shlex.split(command)
    program, args = Path(words[0]).name, words[1:]
    if program == "sentsweep":
        argv = [sys.executable, "-m", "sentsweep", *args]
        if args == ["list"] or "--help" in args:
            return argv
        if args[:1] != ["run"]:
            return None
    elif program == "python" and args and args[0].endswith(".py"):
        argv = [sys.executable, *args]
    else:
        return None
    if "--dry-run" in args:
        return argv
    return [*argv, "--dry-run"] if "--quick" in args else None


def loads_own_code(argv: list[str]) -> bool:
    """A sweep with the reader's own code (6-15 s): a method of their own takes one training step on a tiny model
    before launch."""
    return any(arg.startswith("examples/") for arg in argv) or "--plugin" in argv


DOC_COMMANDS = [(path.relative_to(ROOT), command, runnable_form(command))
                for path in DOC_FILES for command in shell_commands(path.read_text(encoding="utf-8"))]
RUNNABLE = [pytest.param(argv, id=f"{path}: {command}",
                         marks=[pytest.mark.slow] if loads_own_code(argv) else [])
            for path, command, argv in DOC_COMMANDS if argv is not None]


def test_shell_blocks_are_read_with_continuations_joined_and_comments_dropped():
    text = ("```bash\n# a comment\n.venv/bin/python sweeps/a.py --x 1 \\\n    --quick   # trailing\n\n"
            "sentsweep list\n```\n")
    assert shell_commands(text) == [".venv/bin/python sweeps/a.py --x 1 --quick", "sentsweep list"]
    assert runnable_form(".venv/bin/python sweeps/a.py --x 1 --quick") == [sys.executable, "sweeps/a.py", "--x",
                                                                            "1", "--quick", "--dry-run"]
    assert runnable_form(".venv/bin/python sweeps/a.py --corpus mine.txt") is None
    assert runnable_form("sentsweep analyze table --experiment e") is None


def test_the_readme_and_the_docs_have_commands_that_the_tests_run():
    run_ids = {param.id for param in RUNNABLE}
    assert "README.md: .venv/bin/sentsweep list" in run_ids
    assert "README.md: .venv/bin/python sweeps/tsdae_deletion.py --dry-run" in run_ids
    assert len(RUNNABLE) >= 6


@pytest.mark.parametrize("argv", RUNNABLE)
def test_a_docs_command_runs_as_written(argv):
    # a driver's environment, as the other tests' drivers have it: forked from the same server
    # (tests.helpers.forked_python)
    done = run_python(argv, ROOT, driver_environment(None), timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


OVERFLOWING_CODE = """JSON.stringify([...document.querySelectorAll('.md-content pre > code')]
    .filter(block => block.scrollWidth > block.clientWidth + 1).map(block => block.innerText.slice(0, 60)))"""


@pytest.mark.slow  # starts Chromium
def test_no_code_block_cuts_a_line_off_at_laptop_or_desktop_width(site):
    """Every line of every code block shows whole (it wraps inside its block) at 1,280 and 1,600 px, on the pages with
    the longest command lines: the home page's first block and the Analysis page's command reference."""
    import functools
    import http.server
    import json
    import threading

    from tests.helpers.chromium import Chromium

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *arguments: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    seen = {}
    try:
        for width in (1280, 1600):
            with Chromium(width=width, height=900) as browser:
                for page in ("", "analysis/", "performance/"):
                    browser.open(f"http://127.0.0.1:{server.server_port}/{page}")
                    browser.wait_for("document.readyState === 'complete' && "
                                     "document.querySelectorAll('.md-content pre > code').length > 0", timeout_s=60)
                    seen[(width, page)] = json.loads(browser.evaluate(OVERFLOWING_CODE))
    finally:
        server.shutdown()
    assert seen == {(width, page): [] for width in (1280, 1600) for page in ("", "analysis/", "performance/")}

"""Screenshots of the documentation site as a reader's browser shows it: the site built (`make docs`), served on
127.0.0.1, and pages taken by headless Chromium (Debian's `chromium`) into docs/screenshots/.

    python scripts/site_screenshots.py                  # the home page and the analysis page, light and dark
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"site_home": "", "site_analysis": "analysis/"}  # file name -> page
WINDOW = "1600,1000"


def build(site: Path) -> None:
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                   env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # the theme's end-of-life notice off, as `make docs`
                   check=True)


def screenshot(browser: str, url: str, path: Path, dark: bool) -> None:
    """One page at WINDOW pixels (a profile of its own, so no state carries over from another page)."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--no-first-run", f"--user-data-dir={profile}", f"--window-size={WINDOW}",
                        *(["--force-dark-mode", "--blink-settings=preferredColorScheme=0"] if dark else []),
                        f"--screenshot={path}", url], check=True, capture_output=True, timeout=120)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--browser", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder) / "site"
        build(site)
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            args.output_dir.mkdir(parents=True, exist_ok=True)
            for name, page in PAGES.items():
                for dark in (False, True):
                    path = args.output_dir / f"{name}{'_dark' if dark else ''}.png"
                    screenshot(args.browser, f"http://127.0.0.1:{server.server_port}/{page}", path, dark)
                    print(f"wrote {path}")
        finally:
            server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

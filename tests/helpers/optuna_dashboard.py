"""A sweep exported as an Optuna study (`sentsweep analyze to-optuna`) as a user sees it: optuna-dashboard on
127.0.0.1 in headless Chromium.

The slow test (tests/sweep/test_sweeps_quick.py) and the screenshot of docs/analysis.md are made by this code:

    python -m tests.helpers.optuna_dashboard JOURNAL docs/images/optuna-dashboard.png

`OptunaDashboard` serves a journal file; `study_page` reads a study's trial count and best value as displayed.
Reading and waiting only: nothing is clicked.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.helpers.chromium import Chromium
from tests.helpers.cluster_helpers import BIN, free_port, wait_until

PAGE_TEXT = "document.body ? document.body.innerText : ''"


class OptunaDashboard:
    """`optuna-dashboard <journal>` on 127.0.0.1 and a free port; a context that ends it (its process group)."""

    def __init__(self, journal: str | Path) -> None:
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [str(BIN / "optuna-dashboard"), str(journal), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_until(self.healthy, 120, what="optuna-dashboard")
        except BaseException:
            self.close()
            raise

    def healthy(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"optuna-dashboard exited with {self.process.returncode}")
        try:
            with urllib.request.urlopen(f"{self.uri}/api/studies", timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait()

    def __enter__(self) -> OptunaDashboard:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def study_page(browser: Chromium, dashboard: OptunaDashboard, study_id: int = 0) -> tuple[int, float]:
    """(trials, best value) of a study as its pages show them: "N Trials" on its trial list, the value under
    "Best Trial" on its history page (left open, for a screenshot)."""
    browser.open(f"{dashboard.uri}/dashboard/studies/{study_id}/trials")
    # the list shows "0 Trials" until the study's trials have loaded (an export has at least one)
    text = browser.wait_for(f"(t => /[1-9]\\d* Trials/.test(t) && t)({PAGE_TEXT})", what="the trial list")
    trials = int(re.search(r"([1-9]\d*) Trials", text).group(1))
    browser.open(f"{dashboard.uri}/dashboard/studies/{study_id}")
    text = browser.wait_for(f"(t => /Best Trial \\(number=\\d+\\)\\s+\\S+/.test(t) && t)({PAGE_TEXT})",
                            what="the best trial")
    best = float(re.search(r"Best Trial \(number=\d+\)\s+(\S+)", text).group(1))
    return trials, best


def main() -> None:
    parser = argparse.ArgumentParser(description="a screenshot of optuna-dashboard's page of an exported sweep")
    parser.add_argument("journal", help="a journal file `sentsweep analyze to-optuna` wrote")
    parser.add_argument("output", help="the PNG to write")
    args = parser.parse_args()
    with OptunaDashboard(args.journal) as dashboard, Chromium(1440, 1400) as browser:
        trials, best = study_page(browser, dashboard)
        time.sleep(3)  # the plots draw after the numbers they are made of are shown
        browser.screenshot(args.output)
    print(f"{args.output}: {trials} trials, best value {best}")


if __name__ == "__main__":
    main()

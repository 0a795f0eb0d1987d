"""A sweep's runs as a user sees them: MLflow 3.17's UI (`mlflow ui` on 127.0.0.1) in headless Chromium.

The browser test (tests/sweep/test_sweep_end_to_end.py) and the screenshots of docs/mlflow.md are made by this code:

    python -m tests.helpers.mlflow_ui docs/images      # make docs-screenshots: a quick nm_weight sweep, then its views,
                                               # and a quick tsdae_deletion race over steps, then its views

`MlflowUi` serves a store; `open_printed_link` opens the link a sweep printed on it; `configuration_rows` reads the
runs grid as displayed (each row's run name and cells, by the grid's row index); `sweep_run_page` opens a run's
page. Reading and waiting only: the test clicks nothing. The screenshots click what a user would (the assistant
panel's close button, a configuration's expander, a chart's full-screen button).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sentsweep.tracking.store import ANSWER_TITLE
from tests.helpers.chromium import Chromium
from tests.helpers.cluster_helpers import BIN, PROJECT, MlflowServer, wait_until

SCREENSHOTS = ("printed-link", "configuration", "sweep-table", "models", "configuration-seeds", "sweep-run",
               "parallel-coordinates")


class MlflowUi(MlflowServer):
    """`mlflow ui` over a sweep's tracking store, on 127.0.0.1 and a free port; a context that kills it at its end."""

    def __init__(self, store_uri: str) -> None:
        # a folder of its own for its settings and process id (MlflowServer keeps them there, and another server's
        # folder would be attached to: its port, its store)
        super().__init__(Path(tempfile.mkdtemp(prefix="mlflow-ui-")), backend_store=store_uri)

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "mlflow"), "ui", "--backend-store-uri", self.backend_store, "--host", "127.0.0.1", "--port",
             str(self.port), "--workers", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            env=os.environ | {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"})  # no GenAI job runner beside it
        (self.folder / "server.pid").write_text(str(self.process.pid))  # what `kill` ends
        wait_until(self.healthy, 180, what="mlflow ui")

    def __enter__(self) -> MlflowUi:
        return self

    def __exit__(self, *exc) -> None:
        self.kill()
        shutil.rmtree(self.folder, ignore_errors=True)  # its settings and process id, kept only while it runs


def printed_link(output: str) -> str:
    """The link a sweep prints for its answer: the line under its title (`ANSWER_TITLE`)."""
    lines = output.splitlines()
    return lines[lines.index(ANSWER_TITLE) + 1].strip()


def open_printed_link(browser: Chromium, ui: MlflowUi, link: str) -> None:
    """Open a printed link on `ui` (the link names port 5000, as `mlflow ui`'s instruction does)."""
    browser.open(re.sub(r"^https?://[^/]+", ui.uri, link))


# The runs grid as displayed: for each row index, its cells by column id (the pinned run-name column and the
# scrolled columns are separate row elements of one index), the run name without its colour label.
ROWS_SCRIPT = """(() => {
  const rows = {};
  for (const row of document.querySelectorAll('.ag-row[row-index]')) {
    const cells = rows[row.getAttribute('row-index')] ||= {};
    for (const cell of row.querySelectorAll('.ag-cell[col-id]')) {
      cells[cell.getAttribute('col-id')] = cell.innerText.trim();
    }
  }
  return Object.keys(rows).sort((a, b) => a - b).map(index => rows[index]);
})()"""
RUN_NAME = "attributes.`Run Name`"


def configuration_rows(browser: Chromium, expected: int, timeout_s: float = 120.0,
                       columns: tuple[str, ...] = ()) -> list[dict]:
    """The runs grid's rows once it shows `expected` run names (and on each the cells of `columns`: the grid draws
    only the columns in view), each {column id: text}, `name` the run's name."""
    needed = " && ".join(f"({column!r} in row)" for column in columns) or "true"
    browser.wait_for(f"(() => {{ const rows = {ROWS_SCRIPT}; return rows.length >= {expected} && "
                     f"rows.every(row => row['{RUN_NAME}'] && Object.keys(row).length > 3 && {needed}); }})()",
                     timeout_s, what=f"{expected} rows of runs with their cells {', '.join(columns)}")
    rows = browser.evaluate(ROWS_SCRIPT)
    return [row | {"name": row[RUN_NAME].splitlines()[-1].strip()} for row in rows]


def sweep_run_page(browser: Chromium, ui: MlflowUi, experiment_id: str, run_id: str, expect: str,
                   timeout_s: float = 120.0) -> str:
    """Open a run's page; its text once it shows `expect`."""
    browser.open(f"{ui.uri}/#/experiments/{experiment_id}/runs/{run_id}?workflowType=machine_learning")
    return browser.wait_for(f"document.body && document.body.innerText.includes({expect!r}) && document.body.innerText",
                            timeout_s, what=f"the run page showing {expect!r}")


def artifact_page_rows(browser: Chromium, ui: MlflowUi, experiment_id: str, run_id: str, file: str,
                       timeout_s: float = 120.0) -> list[list[str]]:
    """Open a run's HTML artifact in its Artifacts tab; the rows of the table it renders (MLflow shows the page in a
    sandboxed frame of a blob: URL), each a list of its cells' texts."""
    browser.open(f"{ui.uri}/#/experiments/{experiment_id}/runs/{run_id}/artifacts/{file}"
                 "?workflowType=machine_learning")
    script = "[...document.querySelectorAll('tr')].map(row => [...row.cells].map(cell => cell.innerText.trim()))"
    deadline = time.monotonic() + timeout_s
    while not (rows := browser.evaluate_in_frame("blob:", script)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout_s:g} s for {file} rendered in the run's Artifacts tab")
        time.sleep(0.5)
    return rows


def close_assistant(browser: Chromium) -> None:
    """Close MLflow's assistant panel (it opens itself on a first visit to a local server), as a user would."""
    browser.evaluate("""(() => { for (const button of document.querySelectorAll('button[aria-label="Close"]')) {
        if (button.closest('div') && document.body.innerText.includes('MLflow Assistant')) button.click(); } })()""")


def click_text(browser: Chromium, selector: str, text: str) -> None:
    browser.evaluate(f"""(() => {{ for (const element of document.querySelectorAll({selector!r})) {{
        if (element.innerText.includes({text!r})) {{ element.click(); return true; }} }} return false; }})()""")


def save_small(browser: Chromium, path: Path) -> Path:
    """The viewport as a PNG of at most 64 colours (a UI's flat colours keep; the file is a fraction)."""
    from PIL import Image

    browser.screenshot(path)
    with Image.open(path) as image:
        image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path


def run_quick_sweep(name: str, folder: Path, *extra: str) -> tuple[str, str]:
    """A sweep script's --quick run into `folder`; (store URI, printed output)."""
    import importlib.util

    import ray

    path = PROJECT / "sweeps" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folder.mkdir(parents=True, exist_ok=True)
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    output = io.StringIO()
    argv, sys.argv = sys.argv, [str(path)]  # the runs' source: the sweep script, as when it is run
    try:
        with contextlib.redirect_stdout(output):
            code = module.run_sweep(module.DEFINITION, ["--quick", "--tracking-uri", uri, "--output-dir",
                                                        str(folder / "out"), *extra])
    finally:
        sys.argv = argv
        ray.shutdown()
    if code != 0:
        raise RuntimeError(f"{name} --quick exited with {code}:\n{output.getvalue()}")
    return uri, output.getvalue()


def screenshots(uri: str, output: str, folder: Path) -> list[Path]:
    """The views of docs/mlflow.md of the sweep that printed `output` into the store `uri`, at 1,280 px."""
    from mlflow.tracking import MlflowClient

    link = printed_link(output)
    experiment_id = re.search(r"#/experiments/(\d+)/", link).group(1)
    view = re.search(r"viewStateShareKey=([^&\s]+)", link).group(1)
    sweep = view.split("-stage-")[0]  # the sweep run's id: the key of its view of every stage
    client = MlflowClient(uri)
    final = client.search_runs([experiment_id], json.loads(json.loads(client.get_experiment(experiment_id).tags[
        f"mlflow.sharedViewState.{view}"])["state"])["searchFilter"], order_by=["metrics.best_sts_dev_mean DESC"])
    everything = client.search_runs([experiment_id], f"tags.configuration_of = '{sweep}'")
    tables = sorted(artifact.path for artifact in client.list_artifacts(sweep, "tables")
                    if artifact.path.endswith(".html"))
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / f"mlflow-{name}.png" for name in SCREENSHOTS}
    with MlflowUi(uri) as ui, Chromium(width=1280, height=800) as browser:
        open_printed_link(browser, ui, link)
        configuration_rows(browser, len(final))
        close_assistant(browser)
        configuration_rows(browser, len(final), columns=("metrics.`best_sts_dev_n`",))  # the room the panel left
        time.sleep(1)
        save_small(browser, paths["printed-link"])
        sweep_run_page(browser, ui, experiment_id, final[0].info.run_id, "significance group")
        time.sleep(1)
        save_small(browser, paths["configuration"])
        artifact_page_rows(browser, ui, experiment_id, sweep, tables[-1])
        time.sleep(1)
        save_small(browser, paths["sweep-table"])
        browser.open(f"{ui.uri}/#/experiments/{experiment_id}/models?workflowType=machine_learning")
        browser.wait_for("document.body && document.body.innerText.includes('seed')", 120, what="the Models tab")
        time.sleep(2)
        save_small(browser, paths["models"])
        open_printed_link(browser, ui, re.sub(r"viewStateShareKey=[^&\s]+", f"viewStateShareKey={sweep}-seeds", link))
        rows = configuration_rows(browser, len(everything))
        best = client.get_run(sweep).data.tags["best_configuration"]
        index = next(index for index, row in enumerate(rows) if row["name"] == best)
        browser.evaluate(f"document.querySelector('.ag-row[row-index=\"{index}\"] button').click()")  # its expander
        configuration_rows(browser, len(everything) + 2)  # its seeds are shown (at least 2)
        save_small(browser, paths["configuration-seeds"])
        sweep_run_page(browser, ui, experiment_id, sweep, "Best on")
        click_text(browser, "button, a, span", "Show more")  # the whole description
        time.sleep(1)
        save_small(browser, paths["sweep-run"])
        open_printed_link(browser, ui, link + "&compareRunsMode=CHART")
        browser.wait_for("!!document.querySelector('.parcoords')", 120, what="the parallel coordinates chart")
        browser.evaluate("""(() => { let card = [...document.querySelectorAll('div')].filter(element =>
            element.innerText && element.innerText.startsWith('Parallel Coordinates')).pop();
            for (let level = 0; level < 4; level++) card = card.parentElement;
            card.querySelector('button').click(); })()""")  # the chart's full-screen button
        time.sleep(2)
        save_small(browser, paths["parallel-coordinates"])
    return list(paths.values())


# A race over steps small enough for the docs: 3 seeds, 20 steps, an evaluation every 10.
RACE_OVER_STEPS = ("--race", "--race-schedule", "steps", "--seeds", "3", "--max-steps", "20", "--eval-steps", "10")


def race_screenshots(uri: str, output: str, folder: Path) -> list[Path]:
    """docs/mlflow.md's views of a race over steps: the printed link (each configuration's outcome, those the race
    dropped ranked last) and the sweep run's learning-curve picture in its Artifacts tab, at 1,280 px."""
    from mlflow.tracking import MlflowClient

    link = printed_link(output)
    experiment_id = re.search(r"#/experiments/(\d+)/", link).group(1)
    sweep = re.search(r"viewStateShareKey=([^&\s]+)", link).group(1)
    client = MlflowClient(uri)
    configurations = client.search_runs([experiment_id], f"tags.configuration_of = '{sweep}'")
    plots = sorted(artifact.path for artifact in client.list_artifacts(sweep, "plots"))
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / f"mlflow-{name}.png" for name in ("race-over-steps", "sweep-plot")}
    with MlflowUi(uri) as ui, Chromium(width=1280, height=800) as browser:
        open_printed_link(browser, ui, link)
        configuration_rows(browser, len(configurations))
        close_assistant(browser)
        configuration_rows(browser, len(configurations), columns=("tags.`outcome`",))
        time.sleep(1)
        save_small(browser, paths["race-over-steps"])
        curve = next(path for path in plots if path.endswith("-curve.png"))
        browser.open(f"{ui.uri}/#/experiments/{experiment_id}/runs/{sweep}/artifacts/{curve}"
                     "?workflowType=machine_learning")
        browser.wait_for("[...document.querySelectorAll('img')].some(image => image.naturalWidth > 400)", 120,
                         what=f"{curve} shown in the Artifacts tab")
        time.sleep(1)
        save_small(browser, paths["sweep-plot"])
    return list(paths.values())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="docs/mlflow.md's screenshots of a quick nm_weight sweep and of a "
                                                 "quick tsdae_deletion race over steps")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--race-only", action="store_true", help="only the race over steps' screenshots")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sentsweep-screenshots-") as work:
        paths = []
        if not args.race_only:
            uri, output = run_quick_sweep("nm_weight", Path(work) / "nm_weight")
            paths += screenshots(uri, output, args.folder)
        uri, output = run_quick_sweep("tsdae_deletion", Path(work) / "race", *RACE_OVER_STEPS)
        paths += race_screenshots(uri, output, args.folder)
        for path in paths:
            print(f"{path} ({path.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What sentsweep prints to be opened or pasted (a sweep's MLflow links, the command that serves MLflow's UI, a
path, a command line in --help) stays whole on one line at terminals of 80, 120 and 160 columns."""

import io
import re

import pytest

from sentsweep.terminal import HelpFormatter, say, wrap_paragraph
from sentsweep.tracking.store import (
    ANSWER_TITLE,
    SWEEP_RUN_TITLE,
    UI_COMMAND_TITLE,
    experiment_page,
    run_page,
    sweep_pages,
    ui_command,
)

COLUMNS = [80, 120, 160]
URL = re.compile(r"https?://\S+")
RUN_ID = "fb52bf2eb9c04fb39dc20d1a7c2a84b8"
SQLITE = "sqlite:////tmp/a/folder/long/enough/that/the/command/passes/eighty/columns/mlflow.db"


def printed(text: str, columns: int, monkeypatch) -> list[str]:
    """`text` as `say` prints it on a terminal of `columns` columns."""
    monkeypatch.setenv("COLUMNS", str(columns))
    stream = io.StringIO()
    say(text, stream=stream)
    return stream.getvalue().splitlines()


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize("uri", [SQLITE, "http://mlflow.example.org:5000"], ids=["sqlite", "server"])
def test_a_sweeps_links_and_the_ui_command_are_printed_whole_each_under_its_title(uri, columns, monkeypatch):
    lines = printed("\n" + sweep_pages(uri, "12", RUN_ID, RUN_ID), columns, monkeypatch)
    answer, run = experiment_page(uri, "12", RUN_ID), run_page(uri, "12", RUN_ID)
    assert lines[lines.index(ANSWER_TITLE) + 1] == f"    {answer}"
    assert lines[lines.index(SWEEP_RUN_TITLE) + 1] == f"    {run}"
    assert [url for line in lines for url in URL.findall(line)] == [answer, run]  # no URL cut: both whole
    assert answer.endswith(f"/#/experiments/12/runs?workflowType=machine_learning&viewStateShareKey={RUN_ID}")
    assert run.endswith(f"/#/experiments/12/runs/{RUN_ID}?workflowType=machine_learning")
    if uri.startswith("http"):
        assert answer.startswith(f"{uri}/#/") and UI_COMMAND_TITLE not in lines
    else:  # the command that serves the store comes first, on one line, and the links name its address
        assert lines[lines.index(UI_COMMAND_TITLE) + 1] == f"    {ui_command(uri)}"
        assert ui_command(uri) == f"sentsweep ui --tracking-uri {uri}"
        assert answer.startswith("http://127.0.0.1:5000/#/")
    assert all(len(line) <= columns for line in lines if not line.startswith("    "))  # the titles fit


def test_a_servers_password_is_in_none_of_the_links():
    uri = "http://ann:secret@mlflow.example.org"
    assert "secret" not in sweep_pages(uri, "1", RUN_ID, RUN_ID)
    assert "secret" not in sweep_pages("postgresql://ann:secret@db/mlflow", "1", RUN_ID, RUN_ID)


@pytest.mark.parametrize("columns", COLUMNS)
def test_a_paragraph_wraps_at_spaces_and_keeps_a_long_path_or_url_whole_on_a_line_of_its_own(columns, monkeypatch):
    path = "/tmp/view-terminal/" + "a-rather-long-folder-name/" * 6 + "tsdae_deletion-fb52bf2e-reproduction_targets.md"
    url = experiment_page("http://127.0.0.1:5000", "3", RUN_ID)
    text = (f"Reproduction targets: 2 of the sweep's 11 are cells of this stage; every target: {path} and the "
            f"page {url} shows them all, and the words after them wrap as words do")
    lines = printed(text, columns, monkeypatch)
    for word in (path, url):  # whole on one line; alone there where it is longer than the line
        assert word in lines if len(word) > columns else any(word in line for line in lines)
    assert " ".join(lines) == text  # nothing cut, nothing lost
    assert all(len(line) <= columns for line in lines if line not in (path, url))


@pytest.mark.parametrize("columns", COLUMNS)
def test_a_failed_trials_traceback_path_stays_whole_as_the_progress_bar_wraps_it(columns):
    path = "/tmp/ray_results/" + "tsdae_deletion-fb52bf2e-0/" * 5 + "train_a1b2c3_00001/error.txt"
    lines = wrap_paragraph(f"  traceback: {path}", columns, subsequent="    ").splitlines()  # as SweepProgress does
    assert path in [line.strip() for line in lines]


@pytest.mark.parametrize("columns", COLUMNS)
def test_a_url_in_helps_text_stays_whole(columns):
    url = experiment_page("http://127.0.0.1:5000", "3", RUN_ID)
    formatter = HelpFormatter("sentsweep")
    text = formatter._fill_text(f"The sweep's answer opens at {url} once its UI runs.", columns, "")
    assert any(url in line for line in text.splitlines())
    assert any(url in line for line in formatter._split_lines(f"see {url} and more words", columns - 30))

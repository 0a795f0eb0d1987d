"""What a sweep's own MLflow run carries: the experiment, and its answer first.

- params: the experiment (`experiment_params`): each stage's grid (`grid`: {stage: {axis: values}}, a sampled axis
  as its range), the `seeds`, the search (`search`, `num_configs` and `sampler` when Optuna samples, `scheduler`,
  `race`), the tables' significance settings (`alpha`, `correction`), the `selection_metric`, and the protocol's
  settings: each fixed setting by its name, as the trials log it, and each method's own
  (`method_settings.<method>`, a combined method's `+` as ' plus ': `method_settings.tsdae plus nm`,
  `sentsweep.tracking.names.param_key`); a setting the trials report themselves is left out here and logged as they
  used it
  (`sentsweep.tracking.used_values`). MLflow keeps a param's first value, so a value a later --extend changes (more
  seeds, more grid values) is the tag `extended.<param>` instead.
- metrics: the best configuration's statistics (`best_sts_dev_mean`, ..., `sentsweep.tracking.names`) of the
  latest stage, beside the untrained baseline; its name is the tag `best_configuration`.
- description (Markdown, the run page's first block): the final stage's answer (its table, then the best
  configuration in one line), then the earlier stages, then the reproduction targets; each whole while MLflow's
  tag size allows, else a line naming the artifact that holds it whole.
- artifacts: each stage's table as Markdown (`tables/NN-<title>.md`, with its reproduction targets and race), as
  an HTML page that the Artifacts tab renders (`tables/NN-<title>.html`: the same, its marks readable) and as an
  MLflow table (`tables/NN-<title>.json`, `log_table`'s format, which the run's Artifacts tab shows as a
  table): one line per cell, its mean, std, n, 95% interval and standing (`sentsweep.analysis.tables.to_frame`).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping, Sequence

import pandas as pd

from sentsweep.tracking.names import STATISTICS, configuration_name, param_key, statistic_metrics
from sentsweep.tracking.table_html import table_page

DESCRIPTION_TAG = "mlflow.note.content"  # a run's description in the MLflow UI (Markdown)
BEST_CONFIGURATION_TAG = "best_configuration"
EXTENDED_TAG_PREFIX = "extended."
MAX_PARAM_TEXT = 6000  # characters of a param's value MLflow keeps (mlflow.utils.validation.MAX_PARAM_VAL_LENGTH)


def param_text(value) -> str:
    """A param's value as the trials log theirs: JSON for a list or a mapping, else the text."""
    text = json.dumps(value, default=str) if isinstance(value, (list, tuple, dict)) else str(value)
    return text if len(text) <= MAX_PARAM_TEXT else text[:MAX_PARAM_TEXT - 3] + "..."


def axis_values(values):
    """An axis' values as a param shows them: the list of a grid, a sampled domain's choices or range (Ray Tune's
    Categorical, Float, Integer; read by their attributes, so that no Ray is imported)."""
    if hasattr(values, "categories"):
        return {"choice": list(values.categories)}
    if hasattr(values, "lower") and hasattr(values, "upper"):
        sampler = type(getattr(values, "sampler", None)).__name__.strip("_").lower()
        return {"range": [values.lower, values.upper], "sampler": sampler}
    return list(values)


def experiment_params(stages: Sequence[tuple[str, Mapping]], seeds: Sequence[int], constants: Mapping,
                      method_settings: Mapping[str, Mapping], settings: Mapping,
                      not_params: frozenset = frozenset()) -> dict[str, str]:
    """The sweep run's params (see the module docstring): `settings` the search's and tables' ({"search": "grid",
    ...}), `constants` the protocol's fixed settings (those an axis sweeps and `not_params` left out)."""
    axes = {axis for _, stage_axes in stages for axis in stage_axes}
    params = {"grid": {name: {axis: axis_values(values) for axis, values in stage_axes.items()}
                       for name, stage_axes in stages},
              "seeds": list(seeds)} | dict(settings)
    params |= {name: value for name, value in constants.items() if name not in axes | not_params | params.keys()}
    params |= {param_key(f"method_settings.{method}"): values for method, values in method_settings.items() if values}
    return {name: param_text(value) for name, value in params.items() if value is not None}


def stage_file(number: int, title: str, extension: str) -> str:
    return f"tables/{number:02d}-{re.sub(r'[^A-Za-z0-9._-]+', '_', title).strip('_')}.{extension}"


def best_line(cells: pd.DataFrame, row_params: list[str], selection_metric: str) -> tuple[str, str, dict] | None:
    """(name, one line, {metric: {statistic: value}}) of the table's best configuration on the selection metric;
    None when the table has no best there (or no cells at all: no trial scored a number)."""
    if "metric" not in cells.columns:
        return None
    best = cells[(cells["metric"] == selection_metric) & cells["best"]]
    if not len(best):
        return None
    row = tuple(best.iloc[0][row_params])
    of_row = cells[[tuple(line) == row for line in cells[row_params].itertuples(index=False)]]
    name = configuration_name(dict(zip(row_params, row)))
    statistics = {line["metric"]: {statistic: line[statistic] for statistic in STATISTICS}
                  for _, line in of_row.iterrows()}
    order = [selection_metric] + [metric for metric in statistics if metric != selection_metric]
    values = ", ".join(f"{metric} {_mean_std(statistics[metric])}" for metric in order)
    n = int(statistics[selection_metric]["n"])
    return name, (f"**Best on {selection_metric}** (mean over {n} seed{'s' * (n != 1)}): **{name}**: {values}"), \
        statistics


def _mean_std(statistics: Mapping) -> str:
    std = statistics["std"]
    return f"{statistics['mean']:.2f} ± {'n/a' if std is None or math.isnan(std) else f'{std:.2f}'}"


class SweepRecord:
    """The sweep run's params, best configuration, description and table artifacts, written through `writer`.

    `params`: the params the run has (a reopened run's, from the search that found it), so that a param is logged
    once and a changed one becomes a tag."""

    def __init__(self, writer, params: Mapping[str, str] | None = None, tag_limit: int | None = None) -> None:
        from mlflow.utils.validation import MAX_TAG_VAL_LENGTH  # lazy: mlflow

        self.writer = writer
        self.params = dict(params or {})
        self.tag_limit = tag_limit or MAX_TAG_VAL_LENGTH
        self.stages: dict[str, dict] = {}  # title -> its parts, in the order the stages were first logged
        self._logged: set[str] = set()  # the best configuration's statistics' keys logged with a value

    def log_params(self, params: Mapping[str, str]) -> None:
        new = {name: value for name, value in params.items() if name not in self.params}
        if new:
            self.writer.submit({"op": "params", "trial": None, "params": new})
        for name, value in params.items():
            if name in self.params and self.params[name] != value:
                self.writer.submit({"op": "tag", "trial": None, "key": EXTENDED_TAG_PREFIX + name, "value": value})
        self.params |= new

    def log_stage(self, title: str, table_markdown: str, cells: pd.DataFrame, row_params: list[str],
                  selection_metric: str, race: str = "", reproduction: str = "") -> None:
        """A stage's table (`cells`: `to_frame`'s lines of it) on the sweep's run: its artifacts, the best
        configuration's metrics and tag, and the description, which this stage now leads."""
        number = list(self.stages).index(title) + 1 if title in self.stages else len(self.stages) + 1
        markdown_file, table_file = stage_file(number, title, "md"), stage_file(number, title, "json")
        page_file = stage_file(number, title, "html")
        best = best_line(cells, row_params, selection_metric)
        whole = "\n\n".join(filter(None, (table_markdown, best[1] if best else "", race)))
        self.stages.pop(title, None)
        self.stages[title] = {"whole": whole, "best": best[1] if best else "", "file": markdown_file,
                              "page": page_file, "reproduction": reproduction}
        logged = "\n\n".join(filter(None, (table_markdown, reproduction, race)))
        self.writer.submit({"op": "text", "trial": None, "file": markdown_file, "content": logged})
        self.writer.submit({"op": "text", "trial": None, "file": page_file,
                            "content": table_page(title, logged, len(row_params))})
        self.writer.submit({"op": "table", "trial": None, "file": table_file,
                            "content": cells.to_json(orient="split", index=False)})
        if best is not None:
            name, _, statistics = best
            self.writer.submit({"op": "tag", "trial": None, "key": BEST_CONFIGURATION_TAG, "value": name})
            self.writer.submit({"op": "metrics", "trial": None,
                                "metrics": statistic_metrics(statistics, _now_ms(), self._logged)})
        self.writer.submit({"op": "tag", "trial": None, "key": DESCRIPTION_TAG, "value": self.description()})

    def artifact_link(self, file: str) -> str:
        """A Markdown link to the run page's view of its artifact `file`, in MLflow's model-training layout."""
        page = f"#/experiments/{self.writer.experiment_id}/runs/{self.writer.parent_run_id}/artifacts"
        return f"[{file}]({page}/{file}?workflowType=machine_learning)"

    def _whole_in(self, files: list[str]) -> str:
        """Where a part cut from the description is whole: links to the run page's artifact views."""
        return "(whole in the run's artifacts: " + ", ".join(map(self.artifact_link, files)) + ")"

    def _with_page(self, title: str, whole: str) -> str:
        """A stage's whole part of the description, then the link to its table's HTML page."""
        return f"{whole}\n\nThe table as a page: {self.artifact_link(self.stages[title]['page'])}"

    def description(self) -> str:
        """The final stage's answer, the earlier stages, the reproduction targets (module docstring), each whole
        while the tag's size allows, else a line naming its artifact."""
        titles = list(self.stages)[::-1]
        final, earlier = titles[:1], titles[1:]
        parts = [(f"## {title}", self._with_page(title, self.stages[title]["whole"]),
                  "\n\n".join(filter(None, (self.stages[title]["best"], self._whole_in([self.stages[title]["file"]])))))
                 for title in final + sorted(earlier, key=list(self.stages).index)]
        targets = [title for title in self.stages if self.stages[title]["reproduction"]]
        if targets:  # each stage's section less its own heading, under the stage's title where there are several
            sections = [_without_heading(self.stages[title]["reproduction"]) for title in targets]
            body = sections[0] if len(targets) == 1 else "\n\n".join(
                f"### {title}\n\n{section}" for title, section in zip(targets, sections))
            parts.append(("## Reproduction targets", body,
                          self._whole_in([self.stages[title]["file"] for title in targets])))
        chosen = []
        for index, (heading, whole, short) in enumerate(parts):
            rest = sum(len(later_heading) + len(later) + 4 for later_heading, _, later in parts[index + 1:])
            text = whole if len("\n\n".join(chosen)) + len(heading) + len(whole) + 4 + rest <= self.tag_limit \
                else short
            chosen.append(f"{heading}\n\n{text}")
        return "\n\n".join(chosen)[:self.tag_limit]


def _without_heading(markdown: str) -> str:
    """A section's Markdown less its first line where that is a heading (the description gives its own)."""
    first, _, rest = markdown.partition("\n")
    return rest.lstrip("\n") if first.startswith("#") else markdown




def _now_ms() -> int:
    return int(time.time() * 1000)

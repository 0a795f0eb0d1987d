"""The protocols of the project's own sweeps over several works: the learning rate of the contrastive methods
at Reiml (2023) §5.4.2's settings, CT at the TSDAE paper's (App. B)."""

from __future__ import annotations

from sentsweep.references import THESIS_REIML_2023
from sentsweep.search_spaces.protocol import Protocol, Sourced, sourced
from sentsweep.search_spaces.reiml_2023 import NM_SETTINGS
from sentsweep.search_spaces.tsdae import APP_B_CT
from sentsweep.settings import cited, project_choice

LEARNING_RATE_PROTOCOL = Protocol(
    settings=NM_SETTINGS | {"method": Sourced("simcse", project_choice())},
    seeds=Sourced(3, cited(THESIS_REIML_2023, "Table 6.10")),
    grids={
        "method": Sourced(["simcse", "nm", "ct", "consert"], project_choice("the contrastive objectives")),
        "lr": Sourced([1e-5, 3e-5, 5e-5, 1e-4], project_choice("around Reiml 2023's 3e-5")),
    },
    method_settings={"ct": sourced(APP_B_CT, optimizer="rmsprop", lr_schedule="ct_segments", pooling="mean")},
    quick=dict(lr=1e-3, batch_size=16, max_steps=40, eval_steps=20, max_seq_length=32, seeds=2),
    notes=("The other settings are Reiml 2023 §5.4.2's; the lr axis is the initial rate of CT's segmented schedule.",),
)

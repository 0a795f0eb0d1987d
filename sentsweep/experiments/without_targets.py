"""Why a sweep that re-runs a seed table with printed numbers declares no reproduction target (its
`SweepDefinition.published` is empty): {sweep: the reason}. tests/analysis/test_reproduction_targets.py checks that
every sweep naming a seed's table either has targets or is listed here."""

WITHOUT_TARGETS = {
    "batch_size": ("Wang 2022 Table 5.11 scores eProduct, an eBay-internal task: no run of the project produces its "
                   "metric"),
    "sts_distractors": ("Malmberg 2021 Figs. 4.1-4.3 print no numbers (Table 3.2 lists the models it runs): its "
                        "targets are §5.2's findings in words, declared as orderings of its cells (`orderings`)"),
}

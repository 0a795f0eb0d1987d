"""TSDAE paper's main protocol (§5, App. B): TSDAE, MLM, CT and SimCSE for 100K steps, each at its own settings.

No early stopping: the last checkpoint is reported, except SimCSE's, which keeps its official code's early
stopping on STS-B dev (App. B, fn. 8: give --sts-dir). MLM follows §5.2's steps, batch size and rate and
otherwise Devlin et al. (10K warm-up steps, linear decay, weight decay 0.01; outside the seeds). Give the
in-domain corpus with --corpus; Table 2's scores need the USEB tasks with --eval-task (askubuntu, cqadupstack,
twitterpara, scidocs).

    python sweeps/tsdae_main.py --dry-run                         # the protocol card
    python sweeps/tsdae_main.py --quick
"""

from dataclasses import dataclass

from sentsweep.experiments._useb_published import stsb_targets, unsupervised_targets
from sentsweep.experiments.protocols.tsdae import MAIN_PROTOCOL
from sentsweep.references import TSDAE
from sentsweep.sweep import Stage, SweepDefinition
from sentsweep.sweep.options import SweepOptions, option


@dataclass(frozen=True, kw_only=True)
class TsdaeMainOptions(SweepOptions):
    methods: tuple[str, ...] | None = option(f"methods to compare (default: {' '.join(MAIN_PROTOCOL.grid('method'))})")


DEFINITION = SweepDefinition(
    name="tsdae_main",
    description=__doc__.splitlines()[0],
    reference=TSDAE,
    protocol=MAIN_PROTOCOL,
    stages=[Stage("method", lambda options: {"method": options.methods or MAIN_PROTOCOL.grid("method")})],
    options=TsdaeMainOptions,
    table_metrics=["sts_test_last", "sts_dev"],
    # 002 Table 2's unsupervised block on USEB's tasks (given with --eval-task; 4 methods x 4 tasks, mean of 5
    # seeds) and Table 3's STSb test column (4 methods, trained on Wikipedia sentences).
    published=tuple(unsupervised_targets({}) + stsb_targets("sts_test_last")),
)

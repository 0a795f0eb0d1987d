"""The labelled-data intersection search of the TSDAE paper (table 10): how many labelled pairs in-domain
supervised training needs to match an unsupervised method.

Bisection over the labelled sample size on a log scale (the answers span 140 to 6k pairs): the target is the
unsupervised method's mean dev score over seeds, the precision its standard deviation over seeds. A probe
whose mean is within the precision of the target ends the search; one below it moves the lower bound up,
one above it the upper bound down. The two ends are probed first, so a supervised model that never reaches
the target (or always beats it) is reported as such instead of bisected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class IntersectionSearch:
    target: float
    precision: float
    low: int
    high: int
    max_probes: int = 12
    scores: dict[int, float] = field(default_factory=dict)  # sample size -> mean dev score
    answer: int | None = None
    outcome: str = ""

    def next_size(self) -> int | None:
        """The next sample size to train with, or None when the search has its answer."""
        if self.answer is not None:
            return None
        if len(self.scores) >= self.max_probes:
            self.outcome = f"probe limit reached: between {self.low} and {self.high} labelled pairs"
            return None
        for end in (self.high, self.low):
            if end not in self.scores:
                return end
        middle = round(math.sqrt(self.low * self.high))
        return middle if self.low < middle < self.high else None

    def record(self, size: int, score: float) -> None:
        """Take a probe's mean score; update the bracket or conclude."""
        self.scores[size] = score
        if abs(score - self.target) <= self.precision:
            self.answer, self.outcome = size, "within one seed std of the target"
        elif size == self.high and score < self.target:
            self.answer, self.outcome = size, "never reached: below the target even with all labelled pairs"
        elif size == self.low and score > self.target:
            self.answer, self.outcome = size, "already above the target with the fewest labelled pairs"
        elif size not in (self.low, self.high):
            if score < self.target:
                self.low = size
            else:
                self.high = size
            if self.high - self.low <= 1 or round(math.sqrt(self.low * self.high)) in (self.low, self.high):
                self.answer, self.outcome = self.high, "bracket closed"

    def bracket(self) -> tuple[float, float]:
        """The labelled pairs between which the intersection lies, as far as the probes tell: the most probed
        whose mean is below the target by more than the precision (0 if none) and the fewest probed whose mean is
        above it by more (infinity if none); a probe within the precision lies inside."""
        below = [size for size, score in self.scores.items() if score < self.target - self.precision]
        above = [size for size, score in self.scores.items() if score > self.target + self.precision]
        return float(max(below, default=0)), float(min(above, default=math.inf))

"""What a replica promises each request, checked once, where the promises are made.

A request is served within its promises when its first token comes within ``ttft_slo_s`` seconds
and each next token within ``tpot_slo_s`` seconds on average; a replica keeps its promises at a load
where at least ``quota`` of the requests are (conformance ≥ q, chapter 1). The capacity sweep,
the operating point, the plan and the search take one ``Promises`` and trust it: its checks run
when it is made, and nowhere after.

>>> Promises()
Promises(ttft_slo_s=1.0, tpot_slo_s=0.05, quota=0.9)
>>> Promises(tpot_slo_s=0)
Traceback (most recent call last):
...
ValueError: tpot_slo_s must be > 0, got 0
"""

from __future__ import annotations

from dataclasses import dataclass

from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE


@dataclass(frozen=True)
class Promises:
    """τ_TTFT and τ_TPOT (seconds, > 0) and the quota q in (0, 1): the running example's by
    default (1 s, 50 ms, 90 %)."""

    ttft_slo_s: float = EXAMPLE.ttft_slo_s
    tpot_slo_s: float = EXAMPLE.tpot_slo_s
    quota: float = EXAMPLE.quota

    def __post_init__(self) -> None:
        object.__setattr__(self, "ttft_slo_s", _check.positive("ttft_slo_s", self.ttft_slo_s))
        object.__setattr__(self, "tpot_slo_s", _check.positive("tpot_slo_s", self.tpot_slo_s))
        object.__setattr__(self, "quota", _check.fraction("quota", self.quota, high_open=True))

    def said(self) -> str:
        """The promises for a message: 'ttft_slo_s=1.0, tpot_slo_s=0.05, quota=0.9'."""
        return (
            f"ttft_slo_s={self.ttft_slo_s!r}, tpot_slo_s={self.tpot_slo_s!r}, quota={self.quota!r}"
        )


PROMISES = Promises()
"""The running example's promises: the default of every function that takes ``Promises``."""

"""The start-up time T_start, checked once, where it is given, and in one unit each place.

A replica called for serves from T_start later (cold start, chapter 3). The planner's replays
step by the minute, so T_start is given in whole minutes; the engine, the probes of a
Deployment and the reserves count it in seconds. ``Startup`` holds the minutes, checked when it
is made, and gives ``seconds``; every function that takes one trusts it, and no caller converts.

>>> Startup(8).seconds
480.0
>>> Startup(-1)
Traceback (most recent call last):
...
ValueError: startup_min must be an integer >= 0, got -1
"""

from __future__ import annotations

from dataclasses import dataclass

from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE


@dataclass(frozen=True)
class Startup:
    """T_start in whole minutes (≥ 0): the running example's 8 by default."""

    minutes: int = EXAMPLE.startup_min

    def __post_init__(self) -> None:
        object.__setattr__(self, "minutes", _check.integer("startup_min", self.minutes, minimum=0))

    @property
    def seconds(self) -> float:
        """T_start in seconds."""
        return 60.0 * self.minutes


STARTUP = Startup()
"""The running example's start-up: the default of every function that takes a ``Startup``."""

"""The fleet: replicas that are called, start, serve and stop, whatever decides how many.

``Fleet`` holds the ready replicas and the starting ones, with the one admission step (a replica
called at t is paid from t and serves from t + T_start) and the one resizing step (up: call
more; down: cancel the newest starters first, then stop ready replicas). Every simulation of a
fleet shares it: the simulated day, minute by minute, and the closed loop, second by second.

Layer: simulation. Imports core only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from replicaplan.core import _check


@dataclass
class Fleet:
    """Ready replicas and starting ones; ``starting`` holds the time each becomes ready."""

    ready: int
    startup: float
    starting: list = field(default_factory=list)

    def __post_init__(self):
        _check.integer("ready", self.ready, minimum=0)
        _check.non_negative("startup", self.startup)

    @property
    def paid(self) -> int:
        """Replicas paid: the ready ones and those still starting (their GPU is rented)."""
        return self.ready + len(self.starting)

    def admit(self, now: float) -> None:
        """Move the replicas whose start-up has finished by ``now`` into the ready count (a
        closed loop calls it every second; most seconds, none is due)."""
        if self.starting and min(self.starting) <= now:
            done = sum(1 for when in self.starting if when <= now)
            self.ready += done
            self.starting = [when for when in self.starting if when > now]

    def resize(self, want: int, now: float) -> None:
        """Run ``want`` replicas (ready + starting) from ``now`` on.

        Up: call the missing ones, ready at now + startup (at once with a zero start-up). Down:
        cancel the newest starters first, then stop ready replicas.
        """
        want = _check.integer("want", int(want), minimum=0)
        have = self.paid
        if want > have:
            self.starting += [now + self.startup] * (want - have)
            self.admit(now)
        elif want < have:
            drop = have - want
            cut = min(drop, len(self.starting))
            if cut:
                self.starting = sorted(self.starting)[: len(self.starting) - cut]
            self.ready -= drop - cut

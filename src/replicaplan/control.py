"""The closed loop: traffic → replicas → metrics → autoscaler → replicas, second by second.

Each replica is the batching replica of ``replicaplan.replica`` reduced to its fluid limit, so a
whole day (86,400 s, millions of requests) runs in about a second:

* a replica with b running sequences (b ≤ B) completes c(b) = b / W_s(b) requests per second,
  where W_s(b) = prefill(prompt) + (output − 1) · TPOT(b) is the time one request spends in a
  batch of b; a full replica of the running example completes about 8 req/s;
* requests are spread evenly over the ready replicas (a load balancer); L = in flight per
  replica, running b = min(L, B), waiting L − b in the replica's queue;
* arrivals in each second are Poisson with the traffic's rate (seeded), so metrics are noisy;
* a replica called at t is paid from t and serves from t + T_start.

Metrics sampled for the controllers, per replica unless said otherwise:

* ``gpu_utilization``: what nvidia-smi reports, the share of time at least one kernel runs. The
  number of requests in a replica is close to Poisson with mean L (an M/G/∞ occupancy), so the
  share of time with at least one is 1 − e^(−L); it saturates from about 3 requests on.
* ``concurrency``: requests in flight (running + waiting), L.
* ``queue``: requests waiting for a slot, summed over the fleet (an external metric).
* ``kv_occupancy``: running sequences' KV bytes over the memory left after the weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import _check
from .autoscaler import (
    HorizontalAutoscaler,
    KnativeAutoscaler,
    external_replica_count,
    replica_count,
)
from .example import EXAMPLE
from .replica import ReplicaModel


@dataclass(frozen=True)
class FluidReplica:
    """The fluid limit of a batching replica with a fixed mean request shape."""

    model: ReplicaModel = field(default_factory=ReplicaModel)
    prompt_tokens: float = 0.0
    output_tokens: float = EXAMPLE.answer_tokens
    gpu_memory_bytes: float = 80e9

    def __post_init__(self):
        _check.non_negative("prompt_tokens", self.prompt_tokens)
        _check.positive("output_tokens", self.output_tokens)
        if self.gpu_memory_bytes <= self.model.weight_bytes:
            raise ValueError("gpu_memory_bytes must exceed the model's weight bytes")

    def residence_s(self, b):
        """W_s(b) = prefill + (output − 1) · TPOT(b): seconds a request spends in a batch of b."""
        return float(self.model.prefill_s(self.prompt_tokens)) + (
            self.output_tokens - 1
        ) * self.model.tpot(b)

    def completion_rate(self, b):
        """c(b) = b / W_s(b), requests/s completed by a replica running b sequences."""
        b = np.asarray(b, dtype=float)
        return b / self.residence_s(np.maximum(b, 1.0))

    @property
    def capacity_rps(self) -> float:
        """μ = c(B): the most a full replica completes."""
        return float(self.completion_rate(self.model.batch))

    def kv_occupancy(self, b):
        """Share of the KV budget (GPU memory minus weights) used by b running sequences."""
        m = self.model
        return (
            np.asarray(b)
            * m.context_tokens
            * m.kv_bytes_per_token
            / (self.gpu_memory_bytes - m.weight_bytes)
        )


@dataclass(frozen=True)
class Metrics:
    """What a controller can read at a sync."""

    now: float
    ready: int
    starting: int
    gpu_utilization: float
    concurrency: float
    queue: float
    kv_occupancy: float
    in_flight: float


# --------------------------------------------------------------------------- controllers


class Controller:
    """Something that turns metrics into a number of replicas (ready + starting)."""

    period_s: float = 15.0

    def decide(self, m: Metrics) -> int:  # pragma: no cover - interface
        raise NotImplementedError


class HPAOn(Controller):
    """The Kubernetes HPA on one or more metrics, each with its target.

    ``targets`` maps 'gpu_utilization', 'concurrency' or 'kv_occupancy' (per replica, average
    value) or 'queue' (external total, average value per replica) to a target. With several
    metrics the HPA computes a recommendation for each and takes the largest, as Kubernetes does.
    """

    METRICS = ("gpu_utilization", "concurrency", "kv_occupancy", "queue")

    def __init__(self, targets: dict, **kwargs):
        if not targets:
            raise ValueError("targets must name at least one metric")
        for name, value in targets.items():
            if name not in self.METRICS:
                raise ValueError(f"metric must be one of {', '.join(self.METRICS)}, got {name!r}")
            _check.positive(f"targets[{name!r}]", value)
        self.targets = dict(targets)
        self.hpa = HorizontalAutoscaler(target=1.0, **kwargs)
        self.period_s = self.hpa.sync_s

    def decide(self, m: Metrics) -> int:
        self.hpa.replicas = m.ready + m.starting
        wanted = []
        for name, target in self.targets.items():
            if name == "queue":
                wanted.append(
                    external_replica_count(
                        self.hpa.replicas, m.queue, target, tolerance=self.hpa.tolerance
                    )
                )
            else:
                wanted.append(
                    replica_count(
                        [getattr(m, name)] * m.ready,
                        target,
                        unready=m.starting,
                        tolerance=self.hpa.tolerance,
                    )
                )
        return self.hpa.apply(m.now, max(wanted))


class Fixed(Controller):
    """A fleet that never changes size."""

    def __init__(self, replicas: int):
        self.replicas = _check.integer("replicas", replicas, minimum=1)
        self.period_s = 3600.0

    def decide(self, m: Metrics) -> int:
        return self.replicas


class KPA(Controller):
    """Knative's KPA on concurrency, ticking every 2 s."""

    def __init__(self, target: float, **kwargs):
        self.kpa = KnativeAutoscaler(target=target, **kwargs)
        self.period_s = self.kpa.tick_s

    def decide(self, m: Metrics) -> int:
        self.kpa.replicas = m.ready + m.starting
        return self.kpa.step(m.now, m.in_flight, m.ready)


class Proportional(Controller):
    """A hand-written proportional controller on concurrency, with or without counting starters.

    Each sync it computes need = ⌈in flight / target⌉. Counting the replicas already starting,
    it asks for need in all; not counting them, it sees only the ready ones and asks for
    need − ready more on top of those already on their way, so it overshoots while they start.
    Scale-downs wait ``down_window_s`` (the highest need of that window), like the HPA.
    """

    def __init__(
        self,
        target: float,
        *,
        count_starting: bool = True,
        period_s: float = 15.0,
        down_window_s: float = 300.0,
    ):
        self.target = _check.positive("target", target)
        self.count_starting = count_starting
        self.period_s = _check.positive("period_s", period_s)
        self.down_window_s = _check.non_negative("down_window_s", down_window_s)
        self.recent: list = []

    def decide(self, m: Metrics) -> int:
        need = max(1, _check.ceil_count(m.in_flight / self.target))
        self.recent = [(t, n) for t, n in self.recent if t > m.now - self.down_window_s] + [
            (m.now, need)
        ]
        current = m.ready + m.starting
        if self.count_starting:
            want = need
        else:
            want = m.starting + need if need > m.ready else need
        if want < current:
            want = min(current, max(n for _, n in self.recent))
        return want


# --------------------------------------------------------------------------- the loop


@dataclass(frozen=True)
class FleetRun:
    """Per-second record of a closed-loop run."""

    rate: np.ndarray = field(repr=False)
    ready: np.ndarray = field(repr=False)
    paid: np.ndarray = field(repr=False)
    in_flight: np.ndarray = field(repr=False)
    waiting: np.ndarray = field(repr=False)
    served: np.ndarray = field(repr=False)
    gpu_utilization: np.ndarray = field(repr=False)
    capacity_rps: float

    @property
    def paid_hours(self) -> float:
        """Replica-hours paid, starting replicas included."""
        return float(self.paid.sum() / 3600)

    @property
    def queued_seconds(self) -> int:
        """Seconds in which requests wait for a slot (more than one per replica on average)."""
        return int((self.waiting > self.ready).sum())

    @property
    def peak_waiting(self) -> float:
        """The largest number of requests waiting for a slot."""
        return float(self.waiting.max())

    @property
    def mean_residence_s(self) -> float:
        """W̄ by Little's law: mean in flight / mean throughput."""
        return float(self.in_flight.mean() / max(self.served.mean(), 1e-12))

    @property
    def scale_changes(self) -> int:
        """How many times the paid fleet changed size."""
        return int(np.count_nonzero(np.diff(self.paid)))

    @property
    def utilization(self) -> float:
        """Requests served over what the ready replicas could have served at capacity."""
        return float(self.served.sum() / (self.ready.sum() * self.capacity_rps))

    def summary(self) -> dict:
        return {
            "paid_hours": self.paid_hours,
            "queued_seconds": self.queued_seconds,
            "peak_waiting": self.peak_waiting,
            "mean_residence_s": self.mean_residence_s,
            "scale_changes": self.scale_changes,
            "utilization": self.utilization,
        }


def per_second(rate_per_minute) -> np.ndarray:
    """Repeat a per-minute traffic series for each second of its minutes."""
    return np.repeat(_check.rates("rate_per_minute", rate_per_minute), 60)


def simulate_fleet(
    rate,
    controller: Controller,
    *,
    startup_s: float = EXAMPLE.startup_min * 60,
    replica: FluidReplica | None = None,
    initial: int | None = None,
    seed: int = 0,
    poisson: bool = True,
    warm: bool = True,
) -> FleetRun:
    """Run traffic ``rate`` (req/s, one value a second) through a fleet driven by ``controller``."""
    rate = _check.rates("rate", rate)
    startup_s = _check.non_negative("startup_s", startup_s)
    replica = replica or FluidReplica()
    B = replica.model.batch
    mu = replica.capacity_rps
    n = rate.size
    arrivals = np.random.default_rng(seed).poisson(rate) if poisson else rate.copy()
    arrivals = arrivals.astype(float).tolist()

    # c(b) on a fine grid of b, for speed (b is continuous in the fluid limit)
    grid = np.linspace(0, B, 4 * B + 1)
    c_grid = replica.completion_rate(grid)

    ready = (
        initial
        if initial is not None
        else max(1, math.ceil(rate[0] / (EXAMPLE.target_utilization * mu)))
    )
    ready = _check.integer("initial", ready, minimum=1)
    starting: list[float] = []  # times at which starting replicas become ready
    # start warm: the first minute's requests already in flight (Little's law at full speed)
    in_flight = rate[0] * float(replica.residence_s(B)) if warm else 0.0
    out = {k: np.zeros(n) for k in ("ready", "paid", "in_flight", "waiting", "served", "util")}
    next_sync = 0.0
    for t in range(n):
        if starting:
            done = sum(1 for s in starting if s <= t)
            if done:
                ready += done
                starting = [s for s in starting if s > t]
        in_flight += arrivals[t]
        per = in_flight / ready
        b = min(per, B)
        done_rps = ready * float(np.interp(b, grid, c_grid))
        served = min(done_rps, in_flight)
        in_flight -= served
        per = in_flight / ready
        waiting = max(0.0, in_flight - ready * B)
        util = 1.0 - math.exp(-per)
        out["ready"][t], out["paid"][t] = ready, ready + len(starting)
        out["in_flight"][t], out["waiting"][t], out["served"][t], out["util"][t] = (
            in_flight,
            waiting,
            served,
            util,
        )
        if t >= next_sync:
            next_sync += controller.period_s
            m = Metrics(
                now=float(t),
                ready=ready,
                starting=len(starting),
                gpu_utilization=util,
                concurrency=per,
                queue=waiting,
                kv_occupancy=float(replica.kv_occupancy(min(per, B))),
                in_flight=in_flight,
            )
            want = max(1, int(controller.decide(m)))
            have = ready + len(starting)
            if want > have:
                starting += [t + startup_s] * (want - have)
            elif want < have:
                drop = have - want
                cut = min(drop, len(starting))  # cancel the newest starters first
                if cut:
                    starting = sorted(starting)[: len(starting) - cut]
                ready = max(1, ready - (drop - cut))
    return FleetRun(
        rate=rate,
        ready=out["ready"],
        paid=out["paid"],
        in_flight=out["in_flight"],
        waiting=out["waiting"],
        served=out["served"],
        gpu_utilization=out["util"],
        capacity_rps=mu,
    )

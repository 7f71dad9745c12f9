"""Controllers: what turns an observation of the fleet into a number of replicas.

Every controller implements one protocol, ``Controller``: a ``period_s`` between decisions and
``decide(metrics) -> replicas`` (ready + starting). The fleet simulations (``day`` minute by
minute, ``control`` second by second) call it and resize the fleet; they know nothing else
about the controller. Implemented here:

* ``HPAOn``: the Kubernetes HPA (``hpa.HorizontalAutoscaler``) on one or more metrics;
* ``KPA``: Knative's autoscaler (``kpa.KnativeAutoscaler``) on concurrency;
* ``Proportional``: a hand-written proportional rule, with or without counting starters;
* ``Fixed``: a fleet that never changes;
* ``ExactTraffic``: the simulated day's autoscaler, which reads the exact traffic of the minute
  (and, with a calendar, the traffic a start-up ahead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from replicaplan.autoscalers.hpa import HorizontalAutoscaler, MetricSpec
from replicaplan.autoscalers.kpa import KnativeAutoscaler
from replicaplan.core import _check
from replicaplan.core.sizing import ReplicaRate
from replicaplan.serving.fluid import replicas_needed


@dataclass(frozen=True)
class Metrics:
    """What a controller can read at a decision: the fleet, and the signals it exports."""

    now: float
    ready: int
    starting: int
    gpu_utilization: float = 0.0
    """Per replica: share of time a kernel runs (nvidia-smi's counter)."""
    concurrency: float = 0.0
    """Per replica: requests in flight, running and waiting."""
    queue: float = 0.0
    """Fleet total: requests waiting for a batch slot."""
    kv_occupancy: float = 0.0
    """Per replica: share of the KV-cache budget in use."""
    kv_tokens: float = 0.0
    """Per replica: tokens held in the KV cache."""
    in_flight: float = 0.0
    """Fleet total: requests in flight."""
    running: float = 0.0
    """Per replica: requests in the batch, min(in flight, B) (vLLM's num_requests_running)."""
    waiting: float = 0.0
    """Per replica: requests in flight beyond the batch (vLLM's num_requests_waiting)."""
    running_capped: float = 0.0
    """Per replica: requests in flight capped at twice the concurrency target (a signal whose
    ratio to its target, and so each sync's growth, is at most 2)."""
    arrival_rate: float = 0.0
    """Per replica: requests arriving per second over the metric window (a router's or the
    engine's request counter, ``rate(...[window])``), which leaves the backlog out."""
    arrival_total: float = 0.0
    """Fleet total of ``arrival_rate``: KEDA's sum of the counter's rate."""
    completion_rate: float = 0.0
    """Per replica: requests completed per second over the metric window (the engine's own
    counter, vLLM's ``vllm:request_success_total``): the arrival rate while the fleet keeps up,
    the fleet's throughput when it does not, the backlog left out either way."""
    completion_total: float = 0.0
    """Fleet total of ``completion_rate``."""


class Controller(Protocol):
    """Decides, every ``period_s``, how many replicas (ready + starting) the fleet should run.

    A controller may name the ``Metrics`` signals it reads in ``reads``; a simulation then
    leaves the others at zero instead of computing them. Without ``reads``, it gets them all."""

    period_s: float

    def decide(self, m: Metrics) -> int: ...


class HPAOn:
    """The Kubernetes HPA on one or more metrics, each with its target.

    ``targets`` maps a per-replica signal of ``Metrics`` ('gpu_utilization', 'concurrency',
    'kv_occupancy', 'kv_tokens', 'running', 'waiting', 'running_capped', 'arrival_rate'), read
    as a Pods metric with an AverageValue target, or a fleet total ('queue', 'in_flight',
    'arrival_total'), read as an External metric with an AverageValue target as KEDA serves its
    sums, to a target. With several metrics the HPA computes a recommendation for each and takes
    the largest, as Kubernetes does.
    """

    METRICS = (
        "gpu_utilization",
        "concurrency",
        "kv_occupancy",
        "kv_tokens",
        "queue",
        "running",
        "waiting",
        "running_capped",
        "arrival_rate",
        "completion_rate",
        "in_flight",
        "arrival_total",
        "completion_total",
    )
    EXTERNAL = ("queue", "in_flight", "arrival_total", "completion_total")
    """Fleet totals, read as External metrics with an AverageValue target (KEDA's sums)."""
    # A replica that is still starting is counted as a Pending pod (unready: zero on a
    # scale-up, left out on a scale-down), which is what it is while its image is pulled.

    def __init__(self, targets: dict, *, floor=None, **kwargs):
        """``floor``, if given, maps the time (s) to replicas asked for by a schedule (KEDA's cron
        triggers): one more metric whose recommendation joins the others before the limits.

        Every input is checked here, once: each metric becomes one entry of the autoscaler's
        ``spec.metrics`` (a Pods metric with an AverageValue target, or an External one for the
        queue), and each sync runs the model's own ``propose`` and ``decide`` on them, with the
        behavior's tolerances per direction."""
        self.floor = floor
        if not targets:
            raise ValueError("targets must name at least one metric")
        specs = []
        for name, value in targets.items():
            if name not in self.METRICS:
                raise ValueError(f"metric must be one of {', '.join(self.METRICS)}, got {name!r}")
            _check.positive(f"targets[{name!r}]", value)
            kind = "External" if name in self.EXTERNAL else "Pods"
            specs.append((name, MetricSpec(kind, "AverageValue", float(value))))
        self.targets = dict(targets)
        self.reads = tuple(self.targets)
        """The signals ``decide`` reads (a simulation need not compute the others)."""
        self.specs = tuple(specs)
        self.hpa = HorizontalAutoscaler(target=specs[0][1].target, **kwargs)
        self.period_s = self.hpa.sync_s

    def decide(self, m: Metrics) -> int:
        hpa = self.hpa
        hpa.replicas = m.ready + m.starting
        proposals = [
            hpa.propose(spec, value=getattr(m, name))
            if name in self.EXTERNAL
            else hpa.propose(spec, uniform=(getattr(m, name), m.ready, m.starting))
            for name, spec in self.specs
        ]
        if self.floor is not None:
            proposals.append(int(self.floor(m.now)))
        return hpa.decide(m.now, proposals)


class KPA:
    """Knative's KPA on concurrency, ticking every 2 s, aiming at ``target`` requests per pod.

    Knative aims at the revision's target times its target utilization (70 % by default), so
    the revision's annotation that aims at ``target`` is target / utilization.
    """

    def __init__(self, target: float, *, target_utilization: float = 0.7, **kwargs):
        _check.positive("target", target)
        _check.fraction("target_utilization", target_utilization)
        self.kpa = KnativeAutoscaler(
            target=target / target_utilization, target_utilization=target_utilization, **kwargs
        )
        self.period_s = self.kpa.tick_s

    def decide(self, m: Metrics) -> int:
        self.kpa.replicas = m.ready + m.starting
        return self.kpa.step(m.now, m.in_flight, m.ready)


class Fixed:
    """A fleet that never changes size."""

    def __init__(self, replicas: int):
        self.replicas = _check.integer("replicas", replicas, minimum=1)
        self.period_s = 3600.0

    def decide(self, m: Metrics) -> int:
        return self.replicas


class Proportional:
    """A hand-written proportional controller on concurrency, with or without counting starters.

    Each decision computes need = ⌈in flight / target⌉. Counting the replicas already starting,
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
        self.recent = [(t, n) for t, n in self.recent if t > m.now - self.down_window_s]
        self.recent.append((m.now, need))
        current = m.ready + m.starting
        if self.count_starting or need <= m.ready:
            want = need
        else:
            want = m.starting + need
        if want < current:
            want = min(current, max(n for _, n in self.recent))
        return want


class ExactTraffic:
    """The simulated day's autoscaler: it reads the exact traffic, one decision a minute.

    It wants ⌈λ(m)/(ρ* μ*)⌉ + reserve replicas for the traffic of minute m; with ``calendar``
    also for the traffic ``lookahead`` minutes ahead (a perfect calendar); with a ``forecast``
    (one predicted rate per minute) also for the forecast ``lookahead`` minutes ahead; and the
    largest of these. It scales up
    at once, counting replicas already starting as if they were there; it scales down only to
    the largest of the last ``window`` recommendations, and only when no replica is starting.
    """

    period_s = 60.0
    """One decision a minute; ``Metrics.now`` is in seconds, as in every simulator."""

    def __init__(
        self,
        rate,
        replica_rate: ReplicaRate,
        *,
        reserve: int = 0,
        calendar: bool = False,
        forecast=None,
        lookahead: int = 0,
        window: int = 5,
    ):
        rate = _check.rates("rate", rate)
        lookahead = _check.integer("lookahead", lookahead, minimum=0)
        self.window = _check.integer("window", window, minimum=1)
        wanted = replicas_needed(rate, replica_rate, reserve)
        ahead = np.minimum(np.arange(rate.size) + lookahead, rate.size - 1)
        if calendar:
            wanted = np.maximum(wanted, wanted[ahead])
        if forecast is not None:
            forecast = _check.rates("forecast", forecast)
            if forecast.shape != rate.shape:
                raise ValueError(
                    f"forecast must hold one rate per minute ({rate.size}), got {forecast.size}"
                )
            wanted = np.maximum(wanted, replicas_needed(forecast, replica_rate, reserve)[ahead])
        self.wanted = wanted
        self.initial = int(replicas_needed(rate[0], replica_rate, reserve))
        self.recent = [self.initial] * self.window

    def decide(self, m: Metrics) -> int:
        want = int(self.wanted[int(m.now // 60)])
        self.recent = self.recent[1:] + [want]
        have = m.ready + m.starting
        if want > have:
            return want
        if max(self.recent) < m.ready and not m.starting:
            return max(self.recent)
        return have

"""Which signal an autoscaler should read: the candidates measured side by side (issue #31).

Each case is a traffic (one rate a second), a replica (the fluid running example, or a
discrete replica's measured steady states on a log's mix), its operating point (μ*, ρ*, L*)
and a start-up time. Each candidate is the same Kubernetes HPA (upstream behaviour: 15 s syncs,
a replica still starting counted as a Pending pod, the default rules) on one signal, or two,
with one generous bound: ``maxReplicas`` twice the busiest minute's fleet ⌈λ_max/(ρ*μ*)⌉. The
baseline is the chase: the fleet the exact traffic of each minute needs, read a minute at a
time (``controllers.ExactTraffic``), which no real signal can beat without a forecast.

For each run: seconds with requests waiting (more than one a replica beyond the batch), the
share of requests that arrived beyond the ready replicas' capacity μ*, replica-hours, the peak
fleet against the busiest minute's need, and the changes of size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replicaplan.autoscalers.controllers import ExactTraffic, HPAOn
from replicaplan.core import _check
from replicaplan.core.sizing import ReplicaRate
from replicaplan.serving.fluid import replicas_needed
from replicaplan.simulation.control import simulate_fleet

QUEUE_TARGET_SHARE = 0.25
"""The waiting requests a replica may hold, as a share of its batch cap, before the
waiting-requests metric asks for more (the second metric of ``running + waiting guard``)."""

CANDIDATES = {
    "running": "requests running per pod (vllm:num_requests_running) against L*",
    "waiting": "requests waiting per pod (vllm:num_requests_waiting) against a queue target",
    "running + waiting": "requests in flight per pod (running + waiting) against L*",
    "KV-cache usage": "tokens held in the KV cache per pod against those held at L*",
    "running capped": "requests in flight per pod, capped at 2 L*, against L*",
    "running, waiting guard": "two metrics, the larger proposal: running against L* and "
    "waiting against a quarter of the batch",
    "arrival rate": "requests arriving per second per pod (rate of a request counter) against "
    "rho* mu*",
    "completion rate": "requests completed per second per pod (rate of vllm:request_success_total) "
    "against rho* mu*",
    "KEDA: in flight (sum)": "the fleet's requests in flight, summed (External), against L*",
    "KEDA: arrivals (sum)": "the fleet's arrival rate, summed (External), against rho* mu*",
    "KEDA: completions (sum)": "the fleet's completion rate, summed (External), against rho* mu*",
}
"""The signals measured, by the name the tables use."""


def targets(name: str, *, concurrency: float, rate: float, batch: int, kv_tokens: float):
    """``HPAOn``'s targets of candidate ``name`` at an operating point: L* requests in flight,
    ρ*μ* requests a second, a batch cap of ``batch``, ``kv_tokens`` cached at L*."""
    queue = QUEUE_TARGET_SHARE * batch
    return {
        "running": {"running": concurrency},
        "waiting": {"waiting": queue},
        "running + waiting": {"concurrency": concurrency},
        "KV-cache usage": {"kv_tokens": kv_tokens},
        "running capped": {"running_capped": concurrency},
        "running, waiting guard": {"running": concurrency, "waiting": queue},
        "arrival rate": {"arrival_rate": rate},
        "completion rate": {"completion_rate": rate},
        "KEDA: in flight (sum)": {"in_flight": concurrency},
        "KEDA: arrivals (sum)": {"arrival_total": rate},
        "KEDA: completions (sum)": {"completion_total": rate},
    }[name]


@dataclass(frozen=True)
class Case:
    """A traffic, a replica and its operating point, and a start-up."""

    name: str
    rate: np.ndarray
    """Requests per second, one value a second."""
    replica: object
    """A ``FluidReplica`` or ``MeasuredReplica``."""
    replica_rate: ReplicaRate
    """μ* and ρ* of the operating point."""
    concurrency_target: float
    startup_s: float
    window: tuple | None = None
    """(first, last) second of the event the peak and need are read over (the day's step);
    None: the whole traffic."""

    def need(self, first: int = 0, last: int | None = None) -> int:
        """⌈λ_max/(ρ*μ*)⌉ over the busiest minute between seconds ``first`` and ``last``."""
        rate = self.rate[first:last]
        per_minute = rate[: rate.size // 60 * 60].reshape(-1, 60).mean(axis=1)
        return int(replicas_needed(float(per_minute.max()), self.replica_rate))

    @property
    def busiest_fleet(self) -> int:
        """⌈λ_max/(ρ*μ*)⌉ over the busiest minute of the whole traffic."""
        return self.need()


@dataclass(frozen=True)
class Row:
    """One candidate on one case."""

    case: str
    signal: str
    waiting_s: int
    beyond: float
    """Share of the requests that arrived beyond the ready replicas' capacity μ*."""
    replica_hours: float
    peak: int
    """The peak fleet, paid (ready and starting), over the case's window."""
    need: int
    """The busiest minute's fleet ⌈λ_max/(ρ*μ*)⌉ over the case's window."""
    changes: int

    @property
    def peak_ratio(self) -> float:
        return self.peak / self.need


def _row(case: Case, signal: str, run) -> Row:
    rate = case.rate[: run.ready.size]
    beyond = np.maximum(rate - run.ready * case.replica_rate.mu_star_rps, 0.0).sum() / rate.sum()
    first, last = case.window or (0, None)
    return Row(
        case.name,
        signal,
        run.queued_seconds,
        float(beyond),
        run.paid_hours,
        int(run.paid[first:last].max()),
        case.need(first, last),
        run.scale_changes,
    )


def chase(case: Case, seed: int = 0) -> Row:
    """The chase: each minute the fleet its exact traffic needs (``ExactTraffic``)."""
    whole = case.rate.size // 60 * 60
    per_minute = case.rate[:whole].reshape(-1, 60).mean(axis=1)
    controller = ExactTraffic(per_minute, case.replica_rate)
    run = simulate_fleet(
        case.rate[:whole],
        controller,
        startup_s=case.startup_s,
        replica=case.replica,
        initial=controller.initial,
        seed=seed,
    )
    return _row(case, "the chase (exact traffic)", run)


def measure(case: Case, signal: str, *, bound: int | None = None, seed: int = 0) -> Row:
    """Candidate ``signal`` on ``case``, bounded at ``bound`` (twice the busiest minute's fleet
    by default), its metrics averaged over the last minute."""
    if signal not in CANDIDATES:
        raise ValueError(f"signal must be one of {', '.join(CANDIDATES)}, got {signal!r}")
    bound = 2 * case.busiest_fleet if bound is None else _check.integer("bound", bound, minimum=1)
    kv = float(case.replica.kv_tokens(case.concurrency_target))
    wanted = targets(
        signal,
        concurrency=case.concurrency_target,
        rate=case.replica_rate.rps,
        batch=case.replica.batch,
        kv_tokens=kv,
    )
    controller = HPAOn(wanted, min_replicas=1, max_replicas=bound)
    whole = case.rate.size // 60 * 60
    run = simulate_fleet(
        case.rate[:whole],
        controller,
        startup_s=case.startup_s,
        replica=case.replica,
        seed=seed,
        metric_window_s=60,
        concurrency_target=case.concurrency_target,
    )
    return _row(case, signal, run)


def table(cases, signals=tuple(CANDIDATES), seed: int = 0) -> list[Row]:
    """Every signal on every case, each case's chase first."""
    rows = []
    for case in cases:
        rows.append(chase(case, seed))
        rows += [measure(case, s, seed=seed) for s in signals]
    return rows


def burst(quiet_rps: float, surge: float = 7.0, minutes: int = 60, start_min: int = 20,
          length_min: int = 10) -> np.ndarray:  # fmt: skip
    """A synthetic burst, one rate a second: ``quiet_rps``, then ``surge`` times it for
    ``length_min`` minutes from minute ``start_min``."""
    _check.positive("quiet_rps", quiet_rps)
    rate = np.full(minutes * 60, float(quiet_rps))
    rate[start_min * 60 : (start_min + length_min) * 60] *= _check.positive("surge", surge)
    return rate

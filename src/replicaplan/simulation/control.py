"""The closed loop: traffic → replicas → metrics → controller → replicas, second by second.

The replicas are a ``FluidReplica`` (the batching replica in its fluid limit) or a
``MeasuredReplica`` (the discrete replica's measured steady states), so a whole day (86,400 s,
millions of requests) runs in about a second:

* requests are spread evenly over the ready replicas (a load balancer); L = in flight per
  replica, running b = min(L, B), waiting L − b in the replica's queue;
* arrivals in each second are Poisson with the traffic's rate (seeded), so metrics are noisy;
* a replica called at t is paid from t and serves from t + T_start (``fleet.Fleet``);
* every ``controller.period_s`` the controller (any ``controllers.Controller``) reads the
  metrics and the fleet is resized to its decision.

Metrics sampled for the controllers, per replica unless said otherwise: ``gpu_utilization``
(``fluid.gpu_utilization``, what nvidia-smi reports), ``concurrency`` (requests in flight, L),
``queue`` (requests waiting for a slot, summed over the fleet), ``kv_occupancy`` (running
sequences' KV bytes over the memory left after the weights), ``kv_tokens`` (tokens held in the
KV cache).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from replicaplan.autoscalers.controllers import Controller, Metrics
from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.serving.fluid import FluidReplica, MeasuredReplica, gpu_utilization
from replicaplan.simulation.fleet import Fleet


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
    max_rate_rps: float

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
        return float(self.served.sum() / (self.ready.sum() * self.max_rate_rps))

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
    replica: FluidReplica | MeasuredReplica | None = None,
    initial: int | None = None,
    seed: int = 0,
    poisson: bool = True,
    warm: bool = True,
    metric_window_s: int = 0,
    concurrency_target: float | None = None,
) -> FleetRun:
    """Run traffic ``rate`` (req/s, one value a second) through a fleet driven by ``controller``.

    The fleet starts with ``initial`` ready replicas; by default the fewest that carry the
    first second's traffic at full capacity, ⌈λ(0)/μ⌉, from which the controller takes over.
    With ``warm`` the first second's requests are already in flight (λ(0) · W_s(B)).
    With ``metric_window_s`` > 0 the per-replica signals (requests in flight, KV-cache tokens)
    a controller reads are their means over that many past seconds, as a metrics pipeline that
    averages its scrapes (``avg_over_time(...[1m])``) serves them; 0 reads the second itself.
    The arrival rate is the arrivals over that window (60 s when it is 0), per ready replica, as
    ``rate(counter[window])`` reads a request counter. ``concurrency_target`` is the L* that
    ``running_capped`` caps at twice (needed only by a controller that reads it).
    """
    metric_window_s = _check.integer("metric_window_s", metric_window_s, minimum=0)
    rate = _check.rates("rate", rate)
    startup_s = _check.non_negative("startup_s", startup_s)
    replica = replica or FluidReplica()
    B = replica.batch
    max_rate = replica.max_rate_rps
    n = rate.size
    arrivals = np.random.default_rng(seed).poisson(rate) if poisson else rate.copy()
    arrivals = arrivals.astype(float).tolist()
    advance = replica.stepper()

    # by default the fleet that serves the first second flat out: ⌈λ(0)/μ⌉ on the raw rate μ
    first = max(1, _check.ceil_count(float(rate[0]) / max_rate)) if initial is None else initial
    fleet = Fleet(ready=_check.integer("initial", first, minimum=1), startup=startup_s)
    in_flight = replica.warm(float(rate[0])) if warm else 0.0
    ready_s, paid_s, flight_s, waiting_s, served_s = ([0.0] * n for _ in range(5))
    per_s = [0.0] * n  # requests in flight per replica, each second (for the window)
    # the signals that cost a computation are read only by a controller that asks for them
    # (``reads``); one that does not say gets them all
    reads = getattr(controller, "reads", None)
    wants = {
        name: reads is None or name in reads
        for name in ("gpu_utilization", "kv_occupancy", "kv_tokens", "running_capped")
    }
    if wants["running_capped"] and reads is not None and concurrency_target is None:
        raise ValueError("concurrency_target must be given for a controller on running_capped")
    cap = 2 * concurrency_target if concurrency_target is not None else float("inf")
    rate_window = metric_window_s or 60
    arrived = [0.0] * n  # arrivals so far, for the counter's rate
    completed = [0.0] * n  # completions so far, likewise
    busy = replica.busy_requests
    next_sync = 0.0
    for t in range(n):
        fleet.admit(t)
        ready = fleet.ready
        in_flight, served = advance(in_flight, arrivals[t], ready)
        per = in_flight / ready
        waiting = in_flight - ready * B
        if waiting < 0.0:
            waiting = 0.0
        ready_s[t], paid_s[t] = ready, fleet.paid
        flight_s[t], waiting_s[t], served_s[t] = in_flight, waiting, served
        per_s[t] = per
        arrived[t] = (arrived[t - 1] if t else 0.0) + arrivals[t]
        completed[t] = (completed[t - 1] if t else 0.0) + served
        if t >= next_sync:
            next_sync += controller.period_s
            seen = per_s[max(0, t + 1 - metric_window_s) : t + 1] if metric_window_s else None
            per_read = sum(seen) / len(seen) if metric_window_s else per
            utilization = occupancy = tokens = 0.0
            if wants["gpu_utilization"]:
                utilization = gpu_utilization(per, busy)
            if wants["kv_occupancy"]:
                occupancy = float(replica.kv_occupancy(min(per, B)))
            if wants["kv_tokens"]:
                tokens = (
                    float(np.mean(replica.kv_tokens(seen)))
                    if metric_window_s
                    else float(replica.kv_tokens(per))
                )
            back = t - rate_window
            counted = arrived[t] - (arrived[back] if back >= 0 else 0.0)
            span = min(rate_window, t + 1)
            arrival_total = counted / span
            completion_total = (completed[t] - (completed[back] if back >= 0 else 0.0)) / span
            running = per_read if per_read < B else float(B)
            m = Metrics(
                now=float(t),
                ready=ready,
                starting=len(fleet.starting),
                gpu_utilization=utilization,
                concurrency=per_read,
                queue=waiting,
                kv_occupancy=occupancy,
                kv_tokens=tokens,
                in_flight=in_flight,
                running=running,
                waiting=per_read - running,
                running_capped=per_read if per_read < cap else cap,
                arrival_rate=arrival_total / ready,
                arrival_total=arrival_total,
                completion_rate=completion_total / ready,
                completion_total=completion_total,
            )
            fleet.resize(max(1, int(controller.decide(m))), t)
    series = zip(
        ("ready", "paid", "in_flight", "waiting", "served"),
        (ready_s, paid_s, flight_s, waiting_s, served_s),
        strict=True,
    )
    out = {name: np.array(values, dtype=float) for name, values in series}
    # the counter as it read each second (the controller saw the same values at its syncs)
    out["util"] = gpu_utilization(out["in_flight"] / out["ready"], replica.busy_requests)
    return FleetRun(
        rate=rate,
        ready=out["ready"],
        paid=out["paid"],
        in_flight=out["in_flight"],
        waiting=out["waiting"],
        served=out["served"],
        gpu_utilization=out["util"],
        max_rate_rps=max_rate,
    )

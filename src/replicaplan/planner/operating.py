"""The operating point of one replica on a log's own length mix: μ* by the open-loop sweep
(with its error and resolution), the rate ρ*μ* it is given, W̄ measured there, and the target
L* = ρ*μ*W̄ an autoscaler on requests in flight holds.

Layer: planner.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from replicaplan.core import _check
from replicaplan.core.promises import PROMISES, Promises
from replicaplan.core.sizing import SIZING, Sizing
from replicaplan.economics.cost import phase_seconds, split_by_phase
from replicaplan.serving.engine import simulate_open
from replicaplan.serving.fluid import MeasuredReplica
from replicaplan.serving.queueing import littles_law
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.capacity import PRECISION, replica_sweep
from replicaplan.traffic.loadgen import LengthMix, poisson_arrivals
from replicaplan.traffic.logs import TraceFile


@dataclass(frozen=True)
class OperatingPoint:
    """One replica on a log's mix: capacity, the rate it is given, and the target that follows."""

    mu_star: float
    mu_star_stderr: float | None
    resolution: float | None
    target_utilization: float
    rate: float
    """ρ*μ*, requests/s one replica is given."""
    residence_s: float
    """W̄ measured at ``rate`` in open loop."""
    concurrency_target: float
    """L* = ρ*μ*W̄."""
    mean_prompt: float
    mean_output: float
    ttft_p90_s: float = float("nan")
    """90th percentile of the time to first token at the operating rate ρ*μ*."""
    tpot_p90_s: float = float("nan")
    """90th percentile of the time per output token there (answers of two tokens or more)."""


def operating_point(
    trace: TraceFile | LengthMix,
    model: ReplicaModel | None = None,
    *,
    sizing: Sizing = SIZING,
    promises: Promises = PROMISES,
    n_requests: int = 4000,
    seed: int = 0,
    grid_points: int = 13,
    resolution_share: float | None = None,
    precision: float | None = PRECISION,
) -> OperatingPoint:
    """μ*, ρ*μ*, W̄ and L* of ``model`` on the length mix of ``trace`` (a log, or a mix),
    within ``promises``, at the ρ* of ``sizing``.

    The sweep's grid spans 10 % to 130 % of the raw rate a full batch completes at the log's
    mean prompt and answer lengths and its own context (``ReplicaModel.max_rate_rps``),
    widened (260 %, 520 %, 1,040 %) while its top still meets the promises, as a log of short
    requests does; a grid that does not bracket μ* (promises no load can meet, for instance) is
    an error that says why. The grid has
    ``grid_points`` rates; the bisection between them stops at 0.02 req/s, or at
    ``resolution_share`` of the raw rate when given (the configuration search's screening).
    μ* is the mean of independent replications until its standard error is ``precision`` of it
    (``capacity.replicate``; None for the grid's own crossing).
    """
    if isinstance(trace, TraceFile):
        mix = trace.length_mix()
        mean_prompt, mean_output = float(trace.prompt.mean()), float(trace.output.mean())
    elif isinstance(trace, LengthMix):
        mix = trace
        mean_prompt, mean_output = mix.mean()
    else:
        raise ValueError("trace must be a TraceFile (logs.read_trace) or a LengthMix")
    model = model or ReplicaModel()
    target_utilization = sizing.target_utilization  # ρ*; the bounds and budget act later
    # the raw rate at the log's own context (its mean prompt and half its mean answer), not the
    # running example's 2,000 tokens a sequence
    context = mean_prompt + mean_output / 2
    raw = replace(model, context_tokens=context).max_rate_rps(mean_output, mean_prompt)
    grid_points = _check.integer("grid_points", grid_points, minimum=2)
    top = 1.3
    for _ in range(4):  # a grid whose top still meets the promises is widened, up to 10.4x
        grid = np.round(np.linspace(0.1, top, grid_points) * raw, 4)
        extra = {}
        if resolution_share is not None:  # μ* found to this share of the raw rate
            extra["resolution"] = _check.fraction("resolution_share", resolution_share) * raw
        sweep = replica_sweep(
            grid,
            model=model,
            mix=mix,
            n_requests=n_requests,
            promises=promises,
            seed=seed,
            precision=precision,
            **extra,
        )
        if sweep.bracketed or sweep.points[0].conformance < promises.quota:
            break
        top *= 2
    if not sweep.bracketed:
        low = sweep.points[0].conformance < promises.quota
        raise ValueError(
            f"the promises ({promises.said()}) "
            + (
                f"are not met even at {grid[0]} req/s, 10 % of the replica's raw rate: "
                "no load meets them; loosen the promises or use a faster replica"
                if low
                else f"are still met at {grid[-1]} req/s, {top:.0%} of the raw rate: check the "
                "model"
            )
        )
    mu_star = sweep.require_mu_star()
    rate = target_utilization * mu_star
    rng = np.random.default_rng(seed + 1)
    prompt, output = mix.sample(n_requests, rng)
    run = simulate_open(model, poisson_arrivals(rate, n_requests, rng), prompt, output)
    steady = run.window(n_requests // 10)
    decoding = steady.tpot[steady.output > 1]
    residence = float(np.mean(steady.end - steady.arrival))
    return OperatingPoint(
        mu_star=mu_star,
        mu_star_stderr=sweep.mu_star_stderr,
        resolution=sweep.resolution,
        target_utilization=target_utilization,
        rate=rate,
        residence_s=residence,
        concurrency_target=littles_law(rate, residence),
        mean_prompt=mean_prompt,
        mean_output=mean_output,
        ttft_p90_s=float(np.percentile(steady.ttft, 90)),
        tpot_p90_s=float(np.percentile(decoding, 90)) if decoding.size else 0.0,
    )


MIN_HOLDABLE_CONCURRENCY = 2.0
"""Below this many requests in flight per replica an autoscaler cannot hold its target: each
replica's gauge reads a small integer (0, 1, 2) whose average over a handful of replicas jumps
by whole units, so the HPA's ±10 % band is never met and it flaps, or reads 0 and never sees
load."""


@dataclass(frozen=True)
class ScalingSignal:
    """What the autoscaler reads per replica and the value it holds there."""

    signal: str
    """A ``Metrics`` field: 'concurrency' (requests in flight) or 'kv_tokens' (KV-cache tokens)."""
    target: float
    metric_name: str
    """The default name of the per-pod metric the manifests scale on."""
    why: str


SIGNAL = "completion_rate"
"""The signal a plan scales on unless told otherwise: requests completed a second per replica
against ρ*μ*. Measured against the others on the book's day, both Azure traces and a burst
(``planner.signals``, benchmarks/signal_table.py), it pays within a few per cent of the chase
and holds the day's 21:00 step at the 7 replicas it needs, where requests in flight run to the
bound while replicas load their weights."""


def scaling_signal(
    point: OperatingPoint, replica: MeasuredReplica, signal: str | None = None
) -> ScalingSignal:
    """What the autoscaler holds: by default (``SIGNAL``) ρ*μ* requests completed a second per
    replica; 'concurrency', L* requests in flight when L* ≥ ``MIN_HOLDABLE_CONCURRENCY``, else the
    tokens of KV cache a replica holds at ρ*μ* (τ(ℓ(ρ*μ*)) on the measured replica, a quantity
    in the thousands that moves smoothly with the load); 'kv_tokens', those tokens."""
    signal = SIGNAL if signal is None else signal
    if signal not in ("completion_rate", "concurrency", "kv_tokens"):
        raise ValueError(
            f"signal must be 'completion_rate', 'concurrency' or 'kv_tokens', got {signal!r}"
        )
    if signal == "completion_rate":
        return ScalingSignal(
            "completion_rate",
            point.rate,
            "requests_per_second",
            f"requests completed a second per replica, rho* mu* = {point.rate:.2f} (a rate of "
            "the engine's request counter, which leaves a backlog out)",
        )
    L = point.concurrency_target
    if signal == "concurrency" and L >= MIN_HOLDABLE_CONCURRENCY:
        return ScalingSignal(
            "concurrency",
            L,
            "requests_in_flight",
            f"requests in flight per replica, L* = {L:.1f}",
        )
    tokens = float(replica.kv_tokens(replica.in_flight_at(point.rate)))
    reason = (
        f"L* = {L:.2f} requests in flight is below {MIN_HOLDABLE_CONCURRENCY:g}, too few for an "
        "autoscaler to hold on a count that moves by whole requests"
        if signal == "concurrency"
        else "as asked"
    )
    return ScalingSignal(
        "kv_tokens",
        tokens,
        "kv_cache_tokens",
        f"tokens in the KV cache per replica, {tokens:,.0f}: {reason}",
    )


def phase_seconds_at(point: OperatingPoint, model: ReplicaModel) -> tuple[float, float]:
    """Replica seconds of an input token and of an output token at the operating point
    (``cost.phase_seconds`` with the b = L* sequences a replica runs there, at least one and at
    most the batch cap)."""
    return phase_seconds(model, min(max(point.concurrency_target, 1.0), model.batch))


def bill_by_phase(priced, point: OperatingPoint, phase_s: tuple[float, float]):
    """A priced policy's bill (``cost.PricedPolicy``) split into a price per million input
    tokens and one per million output tokens by the replica time each takes (``phase_s``,
    ``phase_seconds_at``): the requests it served carried ``point``'s mean prompt each."""
    served = priced.tokens / point.mean_output
    return split_by_phase(priced.cost, served * point.mean_prompt, priced.tokens, *phase_s)

"""Planning a fleet from a request log: the first step, the operating point of one replica.

From a log (``loadgen.read_trace``) and a replica (``replica.ReplicaModel``, from a datasheet or
fitted to measurements), ``operating_point`` finds what the earlier chapters compute for the
running example, on the log's own length mix:

* μ*, the capacity within the promises, by the open-loop sweep and bisection of ``capacity``,
  with its statistical error and the search's resolution;
* the operating rate ρ*μ* and the mean time in the replica W̄ measured there, in open loop;
* the concurrency target L* = ρ*μ*W̄ (``queueing.littles_law``), the value an autoscaler on
  requests in flight per replica should hold (``manifest.hpa_manifest``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _check
from .capacity import QUOTA, TPOT_SLO_S, TTFT_SLO_S, replica_sweep
from .cost import PricedPolicy, price_day
from .day import DayPolicy, DayResult, run_policies
from .example import EXAMPLE
from .fleet import replicas_needed
from .loadgen import TraceFile, poisson_arrivals
from .queueing import littles_law
from .replica import ReplicaModel, simulate_open
from .reserve import step_reserve


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


def operating_point(
    trace: TraceFile,
    model: ReplicaModel | None = None,
    *,
    target_utilization: float = EXAMPLE.target_utilization,
    ttft_slo_s: float = TTFT_SLO_S,
    tpot_slo_s: float = TPOT_SLO_S,
    quota: float = QUOTA,
    n_requests: int = 4000,
    seed: int = 0,
) -> OperatingPoint:
    """μ*, ρ*μ*, W̄ and L* of ``model`` on the length mix of ``trace``.

    The sweep's grid spans 10 % to 130 % of the raw rate a full batch completes at the log's
    mean answer length; a grid that does not bracket μ* (promises no load can meet, for
    instance) is an error that says why.
    """
    if not isinstance(trace, TraceFile):
        raise ValueError("trace must be a TraceFile (loadgen.read_trace)")
    model = model or ReplicaModel()
    target_utilization = _check.fraction("target_utilization", target_utilization)
    mix = trace.length_mix()
    mean_prompt, mean_output = float(trace.prompt.mean()), float(trace.output.mean())
    raw = model.raw_capacity_rps(mean_output)
    grid = np.round(np.linspace(0.1, 1.3, 13) * raw, 4)
    sweep = replica_sweep(
        grid,
        model=model,
        mix=mix,
        n_requests=n_requests,
        quota=quota,
        ttft_slo_s=ttft_slo_s,
        tpot_slo_s=tpot_slo_s,
        seed=seed,
    )
    if not sweep.bracketed:
        low = sweep.points[0].conformance < quota
        raise ValueError(
            f"the promises (ttft_slo_s={ttft_slo_s}, tpot_slo_s={tpot_slo_s}, quota={quota}) "
            + (
                f"are not met even at {grid[0]} req/s, 10 % of the replica's raw rate: "
                "no load meets them; loosen the promises or use a faster replica"
                if low
                else f"are still met at {grid[-1]} req/s, 130 % of the raw rate: check the model"
            )
        )
    mu_star = sweep.require_mu_star()
    rate = target_utilization * mu_star
    rng = np.random.default_rng(seed + 1)
    prompt, output = mix.sample(n_requests, rng)
    run = simulate_open(model, poisson_arrivals(rate, n_requests, rng), prompt, output)
    steady = run.window(n_requests // 10)
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
    )


# ------------------------------------------------------------------ the log's traffic replayed
@dataclass(frozen=True)
class ReplayRow:
    """One policy over the log's traffic: what it paid, what it missed, what a token cost."""

    policy: DayPolicy
    result: DayResult
    priced: PricedPolicy


def largest_step_reserve(rate, capacity: float, target: float) -> int:
    """Spares for the largest minute-to-minute rise in ``rate``: ⌈Δλ_max/(ρ*μ*)⌉ (0 if none)."""
    rate = _check.rates("rate", rate)
    rise = float(np.max(np.diff(rate), initial=0.0))  # initial=0: a falling log needs none
    return step_reserve(rise, capacity, target)


def replay(
    rate,
    capacity: float,
    *,
    target: float = EXAMPLE.target_utilization,
    startup_min: int = EXAMPLE.startup_min,
    price_per_hour: float = EXAMPLE.price_per_hour,
    answer_tokens: int = EXAMPLE.answer_tokens,
) -> list[ReplayRow]:
    """The log's per-minute traffic under three policies, each priced per token.

    * always on: the fleet the busiest minute needs at the target, ⌈max λ/(ρ*μ*)⌉, all along;
    * chase: the book's autoscaler with ``startup_min`` minutes of start-up;
    * chase with spares: the same, plus the spares the log's largest one-minute rise needs.
    """
    rate = _check.rates("rate", rate)
    capacity = _check.positive("capacity", capacity)
    target = _check.fraction("target", target)
    startup_min = _check.integer("startup_min", startup_min, minimum=0)
    peak_fleet = replicas_needed(float(rate.max()), capacity, target)
    spares = largest_step_reserve(rate, capacity, target)
    policies = [
        DayPolicy("always on, sized for the busiest minute", startup_min=0, fixed=peak_fleet),
        DayPolicy(f"chase, {startup_min} min start", startup_min=startup_min),
        DayPolicy(
            f"chase, {startup_min} min start, spares: {spares}",
            startup_min=startup_min,
            reserve=spares,
        ),
    ]
    rows = run_policies(rate, policies, capacity, target)
    priced = price_day(rows, price_per_hour=price_per_hour, answer_tokens=answer_tokens)
    return [ReplayRow(p, r, c) for (p, r), c in zip(rows, priced, strict=True)]


def recommend(rows: list[ReplayRow]) -> tuple[ReplayRow, str]:
    """The cheapest policy that leaves no minute uncovered; else the one that leaves fewest."""
    covered = [r for r in rows if r.result.uncovered_minutes == 0]
    if covered:
        best = min(covered, key=lambda r: r.priced.per_million)
        return best, "the cheapest per token of the policies that leave no minute uncovered"
    best = min(rows, key=lambda r: (r.result.uncovered_minutes, r.priced.per_million))
    return best, "no policy covers every minute; this one leaves the fewest uncovered"

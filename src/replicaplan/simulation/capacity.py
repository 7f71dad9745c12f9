"""Capacity: the highest arrival rate a replica serves within its promises, by a sweep.

    μ* = max { λ : conformance(λ) ≥ q },   q = 0.9 by default,

where conformance(λ) is the share of requests that meet both SLOs when requests arrive at rate λ
in **open loop** (arrivals independent of answers). The sweep runs λ over a grid, discards the
warm-up at each λ (the queue is still forming), measures over thousands of requests and reports
each share with its binomial and batch-means standard errors (``stats``). The same sweep runs on
the batching replica (``replica``) and on the textbook M/M/1 server (``queueing``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from replicaplan.core import _check, parallel
from replicaplan.core.example import EXAMPLE
from replicaplan.core.parallel import fork_map
from replicaplan.core.promises import PROMISES, Promises
from replicaplan.core.stats import batch_means_error, standard_error
from replicaplan.serving.engine import simulate_closed, simulate_open
from replicaplan.serving.queueing import interactive_law, simulate_mm1
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic.loadgen import (
    AZURE_CONVERSATION,
    LengthMix,
    gamma_arrivals,
    identical,
    poisson_arrivals,
    think_times,
)


@dataclass(frozen=True)
class Point:
    """Conformance measured at one arrival rate."""

    rate: float
    conformance: float
    stderr: float
    """√(p(1 − p)/n), as if requests were independent."""
    n: int
    stderr_batch: float
    """Batch-means standard error, which accounts for requests sharing a queue."""


@dataclass(frozen=True)
class Sweep:
    """A capacity sweep: conformance on a grid of rates, and μ* searched between them.

    The grid brackets μ* when its first rate meets the quota and its last does not; the search
    then bisects between the largest grid rate that meets the quota and the next one, each
    probe a full run at that rate, until the bracket is narrower than ``resolution``.
    """

    points: tuple
    """The grid, one ``Point`` per rate, in increasing rate."""
    quota: float
    probes: tuple = ()
    """The bisection's own runs, in the order they were made."""
    bracket: tuple | None = None
    """(lo, hi): the last rate found to meet the quota and the first found not to; None when the
    grid does not bracket μ*."""
    replicas: tuple = ()
    """μ* of each independent replication (other random draws of the same lengths and
    arrivals, ``replicate``); empty when the sweep was not replicated."""
    precision: float | None = None
    """The relative standard error the replications were run for (None: not replicated)."""

    @property
    def precision_reached(self) -> bool | None:
        """Whether the standard error of μ* is within ``precision`` of it (None: not asked)."""
        if self.precision is None or self.mu_star is None:
            return None
        return self.mu_star_stderr <= self.precision * self.mu_star * (1 + 1e-12)

    @property
    def bracketed(self) -> bool:
        """True when the grid's first rate meets the quota and its last does not."""
        return self.bracket is not None

    @property
    def mu_star(self) -> float | None:
        """μ*: the mean of the replications' μ* when the sweep was replicated, else the middle of
        the final bracket; None when the grid does not bracket it."""
        if self.bracket is None:
            return None
        if len(self.replicas) >= 2:
            return float(np.mean(self.replicas))
        return 0.5 * (self.bracket[0] + self.bracket[1])

    @property
    def resolution(self) -> float | None:
        """Half the final bracket's width: how far μ* may sit from ``mu_star`` by the search."""
        return None if self.bracket is None else 0.5 * (self.bracket[1] - self.bracket[0])

    @property
    def mu_star_stderr(self) -> float | None:
        """Statistical error of μ*. Replicated: the spread of the replications' μ*, s/√R, scaled
        by t_{0.975, R−1}/2 so that μ* ± 2 SE is Student's 95 % interval for R replications.
        Otherwise the batch-means error of the conformance near μ* divided by the slope of the
        curve across the grid interval around it, which misses the error of the rate at which
        the curve crosses the quota (it varies with the draw as a whole)."""
        if self.bracket is None:
            return None
        if len(self.replicas) >= 2:
            return replicated_stderr(self.replicas, pilot=MIN_REPLICATIONS)
        rates = [p.rate for p in self.points]
        i = max(k for k, p in enumerate(self.points) if p.rate <= self.bracket[0])
        i = min(i, len(rates) - 2)
        a, b = self.points[i], self.points[i + 1]
        slope = (a.conformance - b.conformance) / (b.rate - a.rate)
        near = min((*self.points, *self.probes), key=lambda p: abs(p.rate - self.mu_star))
        return float(near.stderr_batch / slope) if slope > 0 else float("inf")

    def not_bracketed_reason(self) -> str | None:
        """Why the grid does not bracket μ*, with the remedy; None when it does."""
        first, last = self.points[0], self.points[-1]
        if last.conformance >= self.quota:
            return (
                f"μ* ≥ {last.rate:g} req/s: conformance is still {last.conformance:.3f} ≥ "
                f"{self.quota:g} at the top of the range; widen the grid of rates upwards"
            )
        if first.conformance < self.quota:
            return (
                f"μ* < {first.rate:g} req/s: conformance is already {first.conformance:.3f} < "
                f"{self.quota:g} at the bottom of the range; widen the grid of rates downwards "
                "(or the promises cannot be met at any rate)"
            )
        return None

    def require_mu_star(self) -> float:
        """μ*, or a ValueError that says why the grid does not bracket it."""
        if self.mu_star is None:
            raise ValueError(self.not_bracketed_reason())
        return self.mu_star

    def to_dict(self) -> dict:
        """μ*, its resolution and error, the bracket, and every point of the grid."""

        def row(p: Point) -> dict:
            return {
                "rate": p.rate,
                "conformance": p.conformance,
                "stderr": p.stderr,
                "stderr_batch_means": p.stderr_batch,
                "n": p.n,
            }

        return {
            "mu_star": self.mu_star,
            "mu_star_resolution": self.resolution,
            "mu_star_stderr": self.mu_star_stderr,
            "bracket": list(self.bracket) if self.bracket else None,
            "replicas": list(self.replicas),
            "precision": self.precision,
            "precision_reached": self.precision_reached,
            "not_bracketed": self.not_bracketed_reason(),
            "quota": self.quota,
            "points": [row(p) for p in self.points],
            "probes": [row(p) for p in self.probes],
        }


def search(
    measure, grid: list[float], quota: float, resolution: float, *, parallel: bool = False
) -> Sweep:
    """Measure conformance on ``grid`` and bisect for μ* between the grid points around it.

    With ``parallel`` the grid's runs, independent of each other, go to the cores
    (``parallel.fork_map``, the same results); the bisection is sequential by nature.

    ``measure(rate) -> Point`` runs the model at one rate. The bracket starts at the largest
    grid rate whose conformance meets the quota and the grid rate after it; each bisection step
    measures the middle and keeps the half where the quota is crossed.
    """
    resolution = _check.positive("resolution", resolution)
    points = tuple(fork_map(measure, grid) if parallel else map(measure, grid))
    sweep = Sweep(points, quota)
    if sweep.not_bracketed_reason() is not None:
        return sweep
    i = max(k for k, p in enumerate(points) if p.conformance >= quota)
    lo, hi = points[i].rate, points[i + 1].rate
    probes = []
    while hi - lo > resolution:
        mid = 0.5 * (lo + hi)
        probe = measure(mid)
        probes.append(probe)
        lo, hi = (mid, hi) if probe.conformance >= quota else (lo, mid)
    return Sweep(points, quota, tuple(probes), (lo, hi))


PRECISION = 0.02
"""Default relative standard error of μ* that ``replicate`` runs until (2 %)."""
MAX_REPLICATIONS = 12
"""The most independent replications ``replicate`` runs before it says the precision was not
reached."""
MIN_REPLICATIONS = 5
_T975 = (math.nan, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201)
"""Student's t_{0.975, ν} for ν = 1 … 11 degrees of freedom (any table of the t distribution)."""


def replicated_stderr(values, pilot: int | None = None) -> float:
    """The standard error of the mean of R independent estimates, scaled so that ± 2 of it is a
    95 % interval: t_{0.975, ν} s/√R / 2, with s and ν = n₀ − 1 from the first ``pilot`` = n₀
    estimates (Stein's two-stage interval, exact for normal estimates whatever R the pilot
    chose), or from all of them when ``pilot`` is None (for R = 3: 2.15 s/√R)."""
    values = np.asarray(values, dtype=float)
    r = values.size
    first = values if pilot is None else values[:pilot]
    t975 = _T975[first.size - 1] if first.size - 1 < len(_T975) else 1.96
    return float(first.std(ddof=1) / np.sqrt(r) * t975 / 2)


def replications_needed(pilot, precision: float) -> int:
    """Stein's second stage: the fewest replications R whose interval t s/√R / 2 from the
    ``pilot`` estimates is at most ``precision`` of their mean (at least the pilot's, at most
    ``MAX_REPLICATIONS``)."""
    pilot = np.asarray(pilot, dtype=float)
    t975 = _T975[pilot.size - 1]
    wanted = (t975 * pilot.std(ddof=1) / (2 * precision * pilot.mean())) ** 2
    return int(min(MAX_REPLICATIONS, max(pilot.size, math.ceil(wanted))))


def replicate(
    sweep: Sweep, measure_for, resolution: float, precision: float | None = PRECISION
) -> Sweep:
    """``sweep`` with μ* measured again on independent draws, in two stages (Stein's): a pilot
    of ``MIN_REPLICATIONS``, then as many more as the pilot's spread says a standard error of
    ``precision`` of μ* needs (at most ``MAX_REPLICATIONS`` in all; ``Sweep.precision_reached``
    says whether that was enough).

    ``measure_for(r)`` is the ``measure`` of replication r (r ≥ 1: other random draws). Each
    replication bisects for μ* between 0.8 and 1.2 times the first sweep's (widened when the
    crossing lies outside) to ``resolution``. None, or a sweep that is not bracketed, returns
    ``sweep`` unchanged.
    """
    if precision is None or not sweep.bracketed:
        return sweep
    precision = _check.fraction("precision", precision)
    first = 0.5 * (sweep.bracket[0] + sweep.bracket[1])

    def one(r: int) -> float:
        measure = measure_for(r)
        lo, hi = 0.8 * first, 1.2 * first
        for _ in range(8):
            if measure(lo).conformance >= sweep.quota:
                break
            lo, hi = 0.6 * lo, lo
        for _ in range(8):
            if measure(hi).conformance < sweep.quota:
                break
            lo, hi = hi, 1.5 * hi
        while hi - lo > resolution:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if measure(mid).conformance >= sweep.quota else (lo, mid)
        return 0.5 * (lo + hi)

    # the grid's own crossing is left out: the highest grid rate meeting the quota is picked
    # among noisy points, which leans it upwards
    # independent draws: on the machine's cores (the serial loop's results, bit for bit)
    found = parallel.fork_map(one, range(1, MIN_REPLICATIONS + 1))
    total = replications_needed(found, precision)
    found += parallel.fork_map(one, range(MIN_REPLICATIONS + 1, total + 1))
    return Sweep(sweep.points, sweep.quota, sweep.probes, sweep.bracket, tuple(found), precision)


def _grid(rates) -> list[float]:
    arr = np.asarray(rates, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("rates must be a non-empty 1-d grid of arrival rates")
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"rates must all be > 0 (λ ≤ 0 has no meaning), got {arr.tolist()}")
    if np.any(np.diff(arr) <= 0):
        raise ValueError(f"rates must be strictly increasing, got {arr.tolist()}")
    return arr.tolist()


def _checked_sweep_args(n_requests: int, warmup: float):
    n_requests = _check.integer("n_requests", n_requests, minimum=10)
    warmup = _check.fraction("warmup", warmup, low_open=False, high_open=True)
    return n_requests, int(n_requests * warmup)


def replica_sweep(
    rates,
    *,
    model: ReplicaModel | None = None,
    mix: LengthMix | str = "azure",
    n_requests: int = 5000,
    warmup: float = 0.1,
    promises: Promises = PROMISES,
    cv: float = 1.0,
    seed: int = 0,
    resolution: float = 0.02,
    precision: float | None = PRECISION,
) -> Sweep:
    """Open-loop sweep of a batching replica: Poisson arrivals, or gamma gaps when ``cv`` ≠ 1.

    ``mix`` is a ``LengthMix`` (default: the Azure conversation mix) or "identical" for every
    request at the Azure mix's mean lengths. The first ``warmup`` share of requests at each
    rate is discarded; the same seed gives the same lengths at every rate (common random
    numbers), so the curve is smooth in λ. ``cv`` is the coefficient of variation of the gaps
    between arrivals (1: Poisson; above 1: bursts). μ* is then measured again on independent
    draws of lengths and arrivals until its standard error is ``precision`` of it (``replicate``;
    None for the one sweep). A request counts when it keeps ``promises``; μ* is the largest rate
    at which their quota of requests does.
    """
    grid = _grid(rates)
    cv = _check.positive("cv", cv)
    n_requests, skip = _checked_sweep_args(n_requests, warmup)
    model = model or ReplicaModel()
    if mix == "identical":
        prompt, output = identical(n_requests, *AZURE_CONVERSATION.mean())
        draw = None
    elif isinstance(mix, LengthMix):
        draw = mix
    elif mix == "azure":
        draw = AZURE_CONVERSATION
    else:
        raise ValueError(f"mix must be a LengthMix, 'azure' or 'identical', got {mix!r}")
    if draw is not None:
        prompt, output = draw.sample(n_requests, np.random.default_rng(seed))

    def measure_with(lengths, arrivals_seed):
        def measure(rate: float) -> Point:
            rng = np.random.default_rng(arrivals_seed)
            arrival = (
                poisson_arrivals(rate, n_requests, rng)
                if cv == 1.0
                else gamma_arrivals(rate, cv, n_requests, rng)
            )
            trace = simulate_open(model, arrival, *lengths).window(skip)
            return _point(rate, trace.meets(promises))

        return measure

    def measure_for(r: int):
        lengths = (
            (prompt, output)
            if draw is None
            else draw.sample(n_requests, np.random.default_rng([seed, 2, r]))
        )
        return measure_with(lengths, [seed, 3, r])

    sweep = search(
        measure_with((prompt, output), [seed, 1]), grid, promises.quota, resolution, parallel=True
    )
    return replicate(sweep, measure_for, resolution, precision)


def mm1_sweep(
    rates,
    *,
    mu: float,
    tau: float,
    n_requests: int = 5000,
    warmup: float = 0.1,
    quota: float = EXAMPLE.quota,
    seed: int = 0,
    resolution: float = 0.02,
    precision: float | None = PRECISION,
) -> Sweep:
    """The same sweep on the textbook one-at-a-time exponential server (M/M/1).

    Every rate uses the same random stream (common random numbers), so the measured curve is
    smooth in λ and the bisection converges on one crossing.
    """
    grid = _grid(rates)
    n_requests, skip = _checked_sweep_args(n_requests, warmup)
    quota = _check.fraction("quota", quota, high_open=True)
    mu = _check.positive("mu", mu)
    tau = _check.positive("tau", tau)

    def measure_for(r: int):
        key = [seed, 0] if r == 0 else [seed, 0, r]

        def measure(rate: float) -> Point:
            residence = simulate_mm1(rate, mu, n_requests, np.random.default_rng(key))
            return _point(rate, residence[skip:] <= tau)

        return measure

    sweep = search(measure_for(0), grid, quota, resolution)
    return replicate(sweep, measure_for, resolution, precision)


def _point(rate: float, met: np.ndarray) -> Point:
    p = float(met.mean())
    return Point(rate, p, standard_error(p, met.size), int(met.size), batch_means_error(met))


# ------------------------------------------------------------------ closed against open loop
@dataclass(frozen=True)
class LoopComparison:
    """One replica under closed-loop users, then under Poisson arrivals at the rate they sent.

    ``closed`` and ``opened`` are the two ``Trace``s; ``rate`` is the throughput the closed loop
    measured in the middle of its run and ``predicted`` what the interactive response-time law
    N_u/(W̄ + Z̄) gives for it; ``skip`` requests at the start of each trace are warm-up.
    """

    users: int
    think_s: float
    closed: object
    opened: object
    rate: float
    predicted: float
    skip: int

    def conformance(self, which: str, promises: Promises = PROMISES) -> float:
        """Share of requests after the warm-up meeting both promises; ``which``: closed or open."""
        trace = {"closed": self.closed, "open": self.opened}[which]
        return float(trace.window(self.skip).meets(promises).mean())


def closed_against_open(
    users: int = 100,
    think_s: float = 5.0,
    requests: int = 6000,
    model: ReplicaModel | None = None,
    mix: LengthMix = AZURE_CONVERSATION,
    seed: int = 0,
) -> LoopComparison:
    """Run the same requests through one replica in closed loop, then in open loop at its rate.

    The closed loop has ``users`` users thinking an exponential ``think_s`` between an answer and
    their next request; the open loop sends Poisson arrivals at the throughput the closed loop
    measured, with the same prompt and answer lengths. Seeds ``seed`` … ``seed + 3`` drive the
    lengths, the think times, the users' first requests and the arrivals: the run is the same
    bit for bit for the same arguments.
    """
    closed, rate, predicted = closed_loop(users, think_s, requests, model, mix, seed)
    prompt, output = mix.sample(requests, np.random.default_rng(seed))
    arrivals = poisson_arrivals(rate, requests, np.random.default_rng(seed + 3))
    opened = simulate_open(model or ReplicaModel(), arrivals, prompt, output)
    return LoopComparison(users, think_s, closed, opened, rate, predicted, requests // 10)


def closed_loop(
    users: int,
    think_s: float = 5.0,
    requests: int = 6000,
    model: ReplicaModel | None = None,
    mix: LengthMix = AZURE_CONVERSATION,
    seed: int = 0,
):
    """One replica under ``users`` closed-loop users: (trace, measured rate, N_u/(W̄ + Z̄)).

    Seed ``seed`` draws the lengths, ``seed + 1`` the exponential think times of mean
    ``think_s``, ``seed + 2`` when each user sends its first request (uniform over one think).
    """
    users = _check.integer("users", users, minimum=1)
    think_s = _check.positive("think_s", think_s)
    requests = _check.integer("requests", requests, minimum=10 * users)
    model = model or ReplicaModel()
    prompt, output = mix.sample(requests, np.random.default_rng(seed))
    z = think_times(think_s, requests, np.random.default_rng(seed + 1))
    start = np.random.default_rng(seed + 2).uniform(0, think_s, users)
    trace = simulate_closed(model, users, z, prompt, output, start_s=start)
    rate, predicted = interactive_law(trace, users, z)
    return trace, rate, predicted


def saturation_rate(
    model: ReplicaModel | None = None,
    mix: LengthMix | str | tuple[int, int] = "azure",
    requests: int = 6000,
    warmup: float = 0.2,
    seed: int = 0,
) -> float:
    """μ, the raw rate: requests/s a replica completes when its queue never empties.

    Twice the batch of users send a new request the instant an answer ends, so every step runs a
    full batch with prompts waiting; the rate is the completions after the first ``warmup``
    share over the time they took. Unlike ``ReplicaModel.max_rate_rps``, which assumes every
    sequence holds ``context_tokens`` and every prompt is computed apart from the decodes, this
    is the mix's own ceiling: its contexts, its prompts riding in the decode steps. μ* < μ.
    ``mix`` is a ``LengthMix``, "azure", or (prompt, output) tokens for identical requests.
    """
    model = model or ReplicaModel()
    requests = _check.integer("requests", requests, minimum=100)
    warmup = _check.fraction("warmup", warmup, low_open=False, high_open=True)
    if isinstance(mix, tuple):
        prompt, output = identical(requests, *mix)
    elif isinstance(mix, LengthMix) or mix == "azure":
        draw = AZURE_CONVERSATION if mix == "azure" else mix
        prompt, output = draw.sample(requests, np.random.default_rng(seed))
    else:
        raise ValueError(f"mix must be a LengthMix, 'azure' or (prompt, output), got {mix!r}")
    trace = simulate_closed(model, 2 * model.batch, np.zeros(requests), prompt, output)
    end = np.sort(trace.end)
    first = int(warmup * requests)
    return float((requests - 1 - first) / (end[-1] - end[first]))

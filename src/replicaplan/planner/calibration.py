"""The replica the plan's replays run on, measured on the discrete replica, and the HPA and KEDA
objects replayed second by second from their YAML.

Layer: planner.
"""

from __future__ import annotations

import numpy as np

from replicaplan.autoscalers.manifest import (
    controller_from_manifest,
    controller_from_scaled_object,
)
from replicaplan.core import _check
from replicaplan.core.parallel import fork_map, jobs
from replicaplan.core.startup import Startup
from replicaplan.planner.operating import OperatingPoint
from replicaplan.serving.engine import simulate_open
from replicaplan.serving.fluid import MeasuredReplica
from replicaplan.serving.replica import ReplicaModel
from replicaplan.serving.trace import Trace
from replicaplan.simulation.control import FleetRun, per_second, simulate_fleet
from replicaplan.traffic.loadgen import LengthMix, poisson_arrivals

MEASURED_FRACTIONS = (0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95)
"""The steady rates, as shares of μ*, at which ``measured_replica`` runs the discrete replica;
past them it goes on in steps of 25 % until the replica no longer keeps up (or 4 μ*)."""
METRIC_WINDOW_S = 60
"""The replays' controllers read each signal as its mean over the last minute, as the KEDA query
(``avg_over_time(...[1m])``) and a metrics adapter averaging its scrapes serve it."""
GROWTH_LIMIT = 1.25
"""A run whose last third of requests stays this much longer than its middle third is a queue
still growing: the replica does not keep up with that rate."""


def steady_state(run: Trace, rate: float) -> tuple[float, float, bool]:
    """(requests in flight ℓ, tokens of KV cache τ, kept up) of one open-loop run at ``rate``,
    its first tenth left out as warm-up.

    By Little's law ℓ = λ · mean residence, and τ = λ · mean(tokens held × time held): a request
    holds its prompt and the answer so far from its first token to its end, on average
    prompt + (output + 1)/2 tokens. The replica kept up if the residence of the run's last third
    is within ``GROWTH_LIMIT`` of its middle third's.
    """
    steady = run.window(run.arrival.size // 10)
    residence = steady.end - steady.arrival
    held = (steady.prompt + (steady.output + 1) / 2) * (steady.end - steady.first_token)
    thirds = np.array_split(residence, 3)
    kept_up = bool(thirds[2].mean() <= GROWTH_LIMIT * max(thirds[1].mean(), 1e-12))
    return rate * float(residence.mean()), rate * float(held.mean()), kept_up


def measured_replica(
    model: ReplicaModel,
    mix: LengthMix,
    point: OperatingPoint,
    *,
    n_requests: int = 4000,
    seed: int = 0,
) -> MeasuredReplica:
    """The discrete replica's steady states on the log's own mix, prefill and waits included:
    ℓ, c and τ at ``MEASURED_FRACTIONS`` of μ*, then on by 25 % a step while the replica keeps
    up (to 4 μ* at most), each run of 2 × ``n_requests`` requests, seeded from ``seed``: the
    same lengths and arrival draws at every rate, so that the curve is smooth."""
    n = 2 * _check.integer("n_requests", n_requests, minimum=100)
    rng = np.random.default_rng(seed + 2)
    prompt, output = mix.sample(n, rng)
    ells, rates, taus = [0.0], [0.0], [0.0]
    fractions = list(MEASURED_FRACTIONS)
    while fractions[-1] < 4.0:
        fractions.append(round(fractions[-1] * 1.25, 6))

    def run(fraction: float) -> tuple[float, float, float, bool]:
        rate = fraction * point.mu_star
        arrival = poisson_arrivals(rate, n, np.random.default_rng(seed + 3))
        return (rate, *steady_state(simulate_open(model, arrival, prompt, output), rate))

    # the runs below μ* on the cores at once; past it, as many at a time as there are cores
    # (``fork_map``: the same results as one by one), until one does not keep up
    below = len(MEASURED_FRACTIONS)
    batches = [fractions[:below]]
    batches += [fractions[k : k + jobs()] for k in range(below, len(fractions), jobs())]
    runs = (result for batch in batches for result in fork_map(run, batch))  # batch by batch
    for rate, ell, tau, kept_up in runs:
        if not kept_up:
            break
        if ell > ells[-1] and tau >= taus[-1]:
            ells.append(ell)
            rates.append(rate)
            taus.append(tau)
    if len(ells) < 3:
        raise ValueError(
            "the replica keeps up with too few rates to be measured: check the model and mix"
        )
    return MeasuredReplica(tuple(ells), tuple(rates), tuple(taus), batch=model.batch)


def hpa_replay(
    rate,
    manifest,
    replica: MeasuredReplica,
    *,
    initial: int,
    startup: Startup,
    signal: str,
    seed: int = 0,
) -> FleetRun:
    """The HPA of ``manifest`` (dict or YAML), reading ``signal`` per replica, driving a fleet of
    ``replica`` over the per-minute ``rate``, second by second (``control.simulate_fleet``),
    from ``initial`` ready replicas (within the manifest's bounds): the plan starts it where it
    starts the policies it compares, ⌈λ(0)/(ρ*μ*)⌉."""
    controller = controller_from_manifest(manifest, signal=signal)
    return _replay(rate, controller, replica, initial, startup, seed)


def keda_replay(
    rate,
    scaled_object,
    replica: MeasuredReplica,
    *,
    initial: int,
    startup: Startup,
    start_s: float,
    signal: str,
    seed: int = 0,
) -> FleetRun:
    """The HPA KEDA makes of ``scaled_object`` (its cron minimums included, placed on the clock
    by ``start_s``) driving a fleet of ``replica`` over ``rate`` from ``initial`` ready
    replicas, as ``hpa_replay``."""
    controller = controller_from_scaled_object(scaled_object, start_s=start_s, signal=signal)
    return _replay(rate, controller, replica, initial, startup, seed)


def _replay(
    rate, controller, replica: MeasuredReplica, initial: int, startup: Startup, seed: int
) -> FleetRun:
    """The log's per-minute rates fed as they are, each second of a minute at its minute's rate:
    the measured replica's steady states already hold the randomness of arrivals within a
    second (they were measured under Poisson arrivals), and Poisson counts on top of them would
    count it twice (measured: 3-9 % more time in the replica on the code trace)."""
    rate = _check.rates("rate", rate)
    initial = _check.integer("initial", initial, minimum=0)
    first = max(controller.hpa.min_replicas, initial, 1)
    return simulate_fleet(
        per_second(rate),
        controller,
        startup_s=startup.seconds,
        replica=replica,
        initial=min(first, controller.hpa.max_replicas),
        seed=seed,
        poisson=False,
        metric_window_s=METRIC_WINDOW_S,
    )

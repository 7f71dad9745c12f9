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

from dataclasses import dataclass, replace

import numpy as np

from replicaplan.autoscalers.hpa import Rules, ScalingPolicy
from replicaplan.autoscalers.manifest import (
    controller_from_manifest,
    controller_from_scaled_object,
    hpa_manifest,
    keda_scaled_object,
)
from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.economics.cost import PricedPolicy, price_day, price_run
from replicaplan.planner.reserve import ramp_reserve, step_reserve
from replicaplan.serving.fluid import FluidReplica, replicas_needed
from replicaplan.serving.queueing import littles_law
from replicaplan.serving.replica import ReplicaModel, simulate_open
from replicaplan.simulation.capacity import QUOTA, TPOT_SLO_S, TTFT_SLO_S, replica_sweep
from replicaplan.simulation.control import FleetRun, per_second, simulate_fleet
from replicaplan.simulation.day import SCALE_DOWN_WINDOW_MIN, DayPolicy, DayResult, run_policies
from replicaplan.traffic.loadgen import AZURE_CONVERSATION, LengthMix, TraceFile, poisson_arrivals
from replicaplan.traffic.synthetic import MINUTES_PER_DAY


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
    trace: TraceFile | LengthMix,
    model: ReplicaModel | None = None,
    *,
    target_utilization: float = EXAMPLE.target_utilization,
    ttft_slo_s: float = TTFT_SLO_S,
    tpot_slo_s: float = TPOT_SLO_S,
    quota: float = QUOTA,
    n_requests: int = 4000,
    seed: int = 0,
) -> OperatingPoint:
    """μ*, ρ*μ*, W̄ and L* of ``model`` on the length mix of ``trace`` (a log, or a mix).

    The sweep's grid spans 10 % to 130 % of the raw rate a full batch completes at the log's
    mean prompt and answer lengths (``ReplicaModel.raw_capacity_rps``); a grid that does not
    bracket μ* (promises no load can meet, for instance) is an error that says why.
    """
    if isinstance(trace, TraceFile):
        mix = trace.length_mix()
        mean_prompt, mean_output = float(trace.prompt.mean()), float(trace.output.mean())
    elif isinstance(trace, LengthMix):
        mix = trace
        mean_prompt, mean_output = mix.mean()
    else:
        raise ValueError("trace must be a TraceFile (loadgen.read_trace) or a LengthMix")
    model = model or ReplicaModel()
    target_utilization = _check.fraction("target_utilization", target_utilization)
    raw = model.raw_capacity_rps(mean_output, mean_prompt)
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


def steepest_ramp_reserve(rate, capacity: float, target: float, startup_min: int) -> int:
    """Spares for the steepest ramp in ``rate``: ⌈λ'_max T_start/(ρ*μ*)⌉, where λ'_max is the
    largest rise over any ``startup_min`` consecutive minutes, divided by that time."""
    rate = _check.rates("rate", rate)
    startup_min = _check.integer("startup_min", startup_min, minimum=0)
    if startup_min == 0 or rate.size <= startup_min:
        return 0
    slope = float(np.max(rate[startup_min:] - rate[:-startup_min], initial=0.0)) / (
        startup_min * 60
    )
    return ramp_reserve(slope, startup_min * 60, capacity, target)


def spares_for(rate, capacity: float, target: float, startup_min: int) -> int:
    """The spares of the chasing policy: enough for the log's steepest ramp and largest step."""
    return max(
        steepest_ramp_reserve(rate, capacity, target, startup_min),
        largest_step_reserve(rate, capacity, target),
    )


# ------------------------------------------------------------------ a schedule from history
SCHEDULE_MIN_DAYS = 2
"""Calendar days a log must touch before a schedule is learned from it (one to learn from, one to
replay on)."""


def _day_and_hour(minutes: int, start_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Calendar day (from the first, UTC) and clock hour of each of ``minutes`` minutes of a
    series whose minute 0 starts at ``start_s`` (epoch seconds)."""
    clock = int(start_s // 60) % MINUTES_PER_DAY + np.arange(minutes)
    return clock // MINUTES_PER_DAY, (clock % MINUTES_PER_DAY) // 60


def _hour_peaks(rate: np.ndarray, start_s: float) -> np.ndarray:
    """The busiest minute of each clock hour (UTC) of each calendar day: shape (days, 24), NaN
    where the log does not reach that hour."""
    day, hour = _day_and_hour(rate.size, start_s)
    peaks = np.full((day[-1] + 1, 24), -np.inf)
    np.maximum.at(peaks, (day, hour), rate)
    peaks[np.isneginf(peaks)] = np.nan
    return peaks


def days_covered(rate, start_s: float = 0.0) -> int:
    """Calendar days (UTC) the per-minute ``rate`` touches, from ``start_s`` (epoch seconds)."""
    return _hour_peaks(_check.rates("rate", rate), start_s).shape[0]


def learned_forecast(rate, start_s: float = 0.0) -> np.ndarray:
    """Per minute, what a schedule learned from the days before would have promised: the busiest
    minute of the same clock hour, averaged over the earlier days of the log (0 on the first
    day, which has no history). Each day sees only the days before it, so a replay with it
    is out of sample."""
    rate = _check.rates("rate", rate)
    peaks = _hour_peaks(rate, start_s)
    seen = np.nan_to_num(peaks)
    counts = np.cumsum(~np.isnan(peaks), axis=0) - ~np.isnan(peaks)  # earlier days only
    sums = np.cumsum(seen, axis=0) - seen
    mean = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return mean[_day_and_hour(rate.size, start_s)]


def schedule(rate, capacity: float, target: float, start_s: float = 0.0) -> list[int]:
    """The minimum replicas for each clock hour (UTC, 0–23) learned from the whole log:
    ⌈peak/(ρ*μ*)⌉ of the busiest minute of that hour averaged over the days (0 for an hour the
    log never reaches). This is the table to apply from tomorrow on."""
    rate = _check.rates("rate", rate)
    mean = np.nan_to_num(np.nanmean(_hour_peaks(rate, start_s), axis=0))
    return [int(n) for n in replicas_needed(mean, capacity, target)]


# ------------------------------------------------------------------ the policies compared
def replay(
    rate,
    capacity: float,
    *,
    target: float = EXAMPLE.target_utilization,
    startup_min: int = EXAMPLE.startup_min,
    price_per_hour: float,
    tokens_per_request: float,
    start_s: float = 0.0,
) -> list[ReplayRow]:
    """The log's per-minute traffic under the book's policies, each priced per token.

    * always on: the fleet the busiest minute needs at the target, ⌈max λ/(ρ*μ*)⌉, all along;
    * chase: the book's autoscaler with ``startup_min`` minutes of start-up;
    * chase with spares: the same, plus ``spares_for`` the log's steepest ramp and largest step;
    * with a schedule, for logs of two days or more: chase, and start ``startup_min`` minutes
      early the replicas ``learned_forecast`` promises from the days before.

    Each is priced by ``cost.price_run`` at ``price_per_hour`` and ``tokens_per_request`` (the
    log's own mean answer, ``OperatingPoint.mean_output``): the planner has no default for
    either, so a reader's traffic is never priced with the running example's numbers.
    """
    rate = _check.rates("rate", rate)
    capacity = _check.positive("capacity", capacity)
    target = _check.fraction("target", target)
    startup_min = _check.integer("startup_min", startup_min, minimum=0)
    peak_fleet = replicas_needed(float(rate.max()), capacity, target)
    spares = spares_for(rate, capacity, target, startup_min)
    policies = [
        DayPolicy("always on, sized for the busiest minute", startup_min=0, fixed=peak_fleet),
        DayPolicy(f"chase, {startup_min} min start", startup_min=startup_min),
        DayPolicy(
            f"chase, {startup_min} min start, spares: {spares}",
            startup_min=startup_min,
            reserve=spares,
        ),
    ]
    forecast = None
    if days_covered(rate, start_s) >= SCHEDULE_MIN_DAYS:
        forecast = learned_forecast(rate, start_s)
        policies.append(
            DayPolicy(
                f"chase, {startup_min} min start, schedule from earlier days",
                startup_min=startup_min,
                forecast=True,
            )
        )
    rows = run_policies(rate, policies, capacity, target, forecast)
    priced = price_day(rows, price_per_hour=price_per_hour, tokens_per_request=tokens_per_request)
    return [ReplayRow(p, r, c) for (p, r), c in zip(rows, priced, strict=True)]


SENSITIVITY_STARTUPS = np.arange(1, 31, 2)
"""Start-up times (min) at which ``plan(..., sensitivity=True)`` runs the policies again."""

POLICY_KINDS = ("always on", "chase", "spares", "schedule")
"""Short names of ``replay``'s rows, in its order (the schedule only for two days or more)."""


@dataclass(frozen=True)
class StartupSensitivity:
    """Each policy over the same traffic as the start-up time varies (arrays by ``startups``)."""

    startups: np.ndarray
    per_million: dict
    """Policy kind (``POLICY_KINDS``) → price per million output tokens at each start-up."""
    uncovered: dict
    """Policy kind → minutes short of capacity at each start-up."""

    def first_short(self, kind: str) -> int | None:
        """The shortest start-up at which ``kind`` leaves a minute short (None if never)."""
        short = np.asarray(self.uncovered[kind]) > 0
        return int(self.startups[np.argmax(short)]) if short.any() else None


def startup_sensitivity(rate, capacity: float, startups, **replay_kwargs) -> StartupSensitivity:
    """``replay`` at each start-up time in ``startups`` (whole minutes): how the policies' prices
    and shortfalls move with the time a replica takes to start."""
    startups = np.asarray(startups)
    if startups.ndim != 1 or startups.size == 0:
        raise ValueError("startups must be a non-empty list of whole minutes")
    per_million: dict = {}
    uncovered: dict = {}
    for t in startups:
        rows = replay(rate, capacity, startup_min=int(t), **replay_kwargs)
        for kind, row in zip(POLICY_KINDS, rows, strict=False):
            per_million.setdefault(kind, []).append(row.priced.per_million)
            uncovered.setdefault(kind, []).append(row.result.uncovered_minutes)
    return StartupSensitivity(
        startups,
        {k: np.array(v) for k, v in per_million.items()},
        {k: np.array(v) for k, v in uncovered.items()},
    )


def recommend(rows: list[ReplayRow]) -> tuple[ReplayRow, str]:
    """The cheapest policy that leaves no minute uncovered; else the one that leaves fewest."""
    covered = [r for r in rows if r.result.uncovered_minutes == 0]
    if covered:
        best = min(covered, key=lambda r: r.priced.per_million)
        return best, "the cheapest per token of the policies that leave no minute uncovered"
    best = min(rows, key=lambda r: (r.result.uncovered_minutes, r.priced.per_million))
    return best, "no policy covers every minute; this one leaves the fewest uncovered"


# ------------------------------------------------------------------ the autoscaler's behavior
def scale_down_window_min(startup_min: int) -> int:
    """Minutes of recommendations a scale-down respects: max(the book's window, T_start).

    A replica given back and wanted again within a start-up leaves that start-up uncovered,
    so a dip shorter than T_start should not release one."""
    return max(SCALE_DOWN_WINDOW_MIN, _check.integer("startup_min", startup_min, minimum=0))


def behavior(rate, capacity: float, target: float, startup_min: int) -> tuple[Rules, Rules]:
    """The HPA's ``behavior`` from the start-up time and the log's ramps.

    Up, every 15 s sync: no window; at most max(4, k↑) pods or 100 % more, whichever is more,
    where k↑ = ⌈Δλ↑_max/(ρ*μ*)⌉ are the replicas the log's largest one-minute rise asks for, so
    the limit never holds back a rise the log has shown (4 and 100 % are the API's defaults).
    Down: the highest recommendation of the last ``scale_down_window_min`` minutes, and at
    most max(1, k↓) pods a minute, k↓ = ⌈Δλ↓_max/(ρ*μ*)⌉ for the largest one-minute fall.
    """
    rate = _check.rates("rate", rate)
    steps = np.diff(rate)
    k_up = step_reserve(float(np.max(steps, initial=0.0)), capacity, target)
    k_down = step_reserve(float(-np.min(steps, initial=0.0)), capacity, target)
    up = Rules((ScalingPolicy("Pods", max(4, k_up), 15), ScalingPolicy("Percent", 100, 15)))
    down = Rules(
        (ScalingPolicy("Pods", max(1, k_down), 60),),
        stabilization_s=60 * scale_down_window_min(startup_min),
    )
    return up, down


def fluid_replica(model: ReplicaModel, point: OperatingPoint) -> FluidReplica:
    """The replica in its fluid limit at the log's mean request, for second-by-second replays,
    calibrated to the discrete replica at the operating point.

    The fluid limit leaves out what the discrete replica measures at ρ*μ*: waits for a
    prefill pass and decode steps stalled by them. Its request time is stretched by
    κ = W̄ / W_s(L*) (at least 1) so that a replica holding L* in flight completes ρ*μ*
    requests a second, as Little's law and the measured W̄ say it does.
    """
    memory = model.weight_bytes + model.kv_capacity_tokens * model.kv_bytes_per_token
    plain = FluidReplica(
        model,
        prompt_tokens=point.mean_prompt,
        output_tokens=point.mean_output,
        gpu_memory_bytes=memory,
    )
    running = min(point.concurrency_target, model.batch)
    slowdown = max(1.0, point.residence_s / float(plain.residence_s(max(running, 1.0))))
    return replace(plain, slowdown=slowdown)


def hpa_replay(
    rate, manifest, replica: FluidReplica, *, startup_min: int, seed: int = 0
) -> FleetRun:
    """The HPA of ``manifest`` (dict or YAML) driving a fleet of ``replica`` over the per-minute
    ``rate``, second by second with Poisson arrivals (``control.simulate_fleet``)."""
    return _replay(rate, controller_from_manifest(manifest), replica, startup_min, seed)


def keda_replay(
    rate, scaled_object, replica: FluidReplica, *, startup_min: int, start_s: float, seed: int = 0
) -> FleetRun:
    """The HPA KEDA makes of ``scaled_object`` (its cron minimums included, placed on the clock
    by ``start_s``) driving a fleet of ``replica`` over ``rate``, as ``hpa_replay``."""
    controller = controller_from_scaled_object(scaled_object, start_s=start_s)
    return _replay(rate, controller, replica, startup_min, seed)


def _replay(rate, controller, replica: FluidReplica, startup_min: int, seed: int) -> FleetRun:
    rate = _check.rates("rate", rate)
    first = max(controller.hpa.min_replicas, replicas_needed(float(rate[0]), replica.capacity_rps))
    return simulate_fleet(
        per_second(rate),
        controller,
        startup_s=60 * _check.integer("startup_min", startup_min, minimum=0),
        replica=replica,
        initial=min(first, controller.hpa.max_replicas),
        seed=seed,
    )


# ------------------------------------------------------------------ the whole plan
@dataclass(frozen=True)
class Plan:
    """Everything ``plan`` finds: the operating point, the policies over the log's traffic, the
    recommendation, the schedule and the autoscaler's manifests with their replay."""

    point: OperatingPoint
    rate: np.ndarray
    start_s: float
    startup_min: int
    price_per_hour: float
    rows: list[ReplayRow]
    recommended: ReplayRow
    why: str
    schedule: list[int] | None
    """Minimum replicas per clock hour (UTC), learned from two days or more; else None."""
    min_replicas: int
    max_replicas: int
    hpa: dict
    keda: dict
    fluid: FluidReplica
    """The calibrated fluid replica both replays ran on (``fluid_replica``)."""
    hpa_run: FleetRun
    keda_run: FleetRun | None
    """The KEDA object replayed with its cron minimums; None when it has none (then it is the
    HPA)."""
    sensitivity: StartupSensitivity | None = None
    """The policies at each of ``SENSITIVITY_STARTUPS`` and the plan's own start-up, computed
    once by ``plan(..., sensitivity=True)`` (what a report shows); None when not asked for."""

    def cost_per_million(self, run: FleetRun) -> float:
        """A replay's price per million output tokens (``cost.price_run``)."""
        return price_run(
            run.paid_hours, float(run.served.sum()), self.point.mean_output, self.price_per_hour
        )[2]

    @property
    def hpa_cost_per_million(self) -> float:
        """The replayed HPA's price per million output tokens."""
        return self.cost_per_million(self.hpa_run)


def plan(
    traffic,
    model: ReplicaModel | None = None,
    *,
    lengths: TraceFile | LengthMix | None = None,
    target_utilization: float = EXAMPLE.target_utilization,
    ttft_slo_s: float = TTFT_SLO_S,
    tpot_slo_s: float = TPOT_SLO_S,
    quota: float = QUOTA,
    startup_min: int = EXAMPLE.startup_min,
    price_per_hour: float = EXAMPLE.price_per_hour,
    name: str = "llm",
    metric_name: str = "requests_in_flight",
    prometheus: str = "http://prometheus.monitoring.svc:9090",
    start_s: float | None = None,
    n_requests: int = 4000,
    seed: int = 0,
    sensitivity: bool = False,
) -> Plan:
    """Plan a fleet for ``traffic``: a request log (``loadgen.read_trace``) or a per-minute rate
    series (``loadgen.read_rate_series``), served by ``model`` (the running example's replica by
    default) within the promises.

    The length mix is the log's own, or ``lengths``; a rate series carries no lengths, so it
    takes ``lengths`` or the Azure conversation mix. Errors, each naming the parameter: promises
    no load meets, a log shorter than the scale-down window, a log without requests.
    """
    model = model or ReplicaModel()
    if isinstance(traffic, TraceFile):
        rate = traffic.rate_per_minute()
        lengths = lengths or traffic
        start_s = traffic.start if start_s is None else start_s
    else:
        rate = _check.rates("traffic", traffic)
        lengths = lengths or AZURE_CONVERSATION
        start_s = start_s or 0.0
    if not rate.any():
        raise ValueError("traffic holds no requests")
    startup_min = _check.integer("startup_min", startup_min, minimum=0)
    window = scale_down_window_min(startup_min)
    if rate.size < window:
        raise ValueError(
            f"traffic covers {rate.size} minute(s), shorter than the scale-down window "
            f"({window} min = max({SCALE_DOWN_WINDOW_MIN}, startup_min)): a replay could not "
            "show one scale-down; give a log of at least that many minutes"
        )
    price_per_hour = _check.positive("price_per_hour", price_per_hour)
    point = operating_point(
        lengths,
        model,
        target_utilization=target_utilization,
        ttft_slo_s=ttft_slo_s,
        tpot_slo_s=tpot_slo_s,
        quota=quota,
        n_requests=n_requests,
        seed=seed,
    )
    target, mu = point.target_utilization, point.mu_star
    rows = replay(
        rate,
        mu,
        target=target,
        startup_min=startup_min,
        price_per_hour=price_per_hour,
        tokens_per_request=point.mean_output,
        start_s=start_s,
    )
    best, why = recommend(rows)
    enough = days_covered(rate, start_s) >= SCHEDULE_MIN_DAYS
    table = schedule(rate, mu, target, start_s) if enough else None
    low = max(1, replicas_needed(float(rate.min()), mu, target))
    high = max(low + 1, 2 * replicas_needed(float(rate.max()), mu, target))
    up, down = behavior(rate, mu, target, startup_min)
    # the same target, bounds and behavior in both manifests
    shared = dict(min_replicas=low, max_replicas=high, up=up, down=down, metric_name=metric_name)
    hpa = hpa_manifest(name, point.concurrency_target, **shared)
    scheduled = table if table is not None and best.policy.forecast else None
    keda = keda_scaled_object(
        name,
        point.concurrency_target,
        **shared,
        prometheus=prometheus,
        schedule=scheduled,
        lead_min=startup_min,
    )
    fluid = fluid_replica(model, point)
    run = hpa_replay(rate, hpa, fluid, startup_min=startup_min, seed=seed)
    keda_run = None
    if scheduled is not None:
        keda_run = keda_replay(
            rate, keda, fluid, startup_min=startup_min, start_s=start_s, seed=seed
        )
    return Plan(
        point=point,
        rate=rate,
        start_s=float(start_s),
        startup_min=startup_min,
        price_per_hour=price_per_hour,
        rows=rows,
        recommended=best,
        why=why,
        schedule=table,
        min_replicas=low,
        max_replicas=high,
        hpa=hpa,
        keda=keda,
        fluid=fluid,
        hpa_run=run,
        keda_run=keda_run,
        sensitivity=startup_sensitivity(
            rate,
            mu,
            np.unique(np.r_[SENSITIVITY_STARTUPS, startup_min]),
            target=target,
            price_per_hour=price_per_hour,
            tokens_per_request=point.mean_output,
            start_s=start_s,
        )
        if sensitivity
        else None,
    )

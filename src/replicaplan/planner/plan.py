"""A plan for a reader's own fleet, from a request log or a rate series: the orchestrator.

``plan`` runs the planner's steps, each in its own module, and gathers what they find in a
``Plan``:

* ``operating``: μ*, ρ*μ*, W̄ and L* of one replica on the log's own length mix;
* ``replay``: the policies over the log's traffic, priced, and the recommendation;
* ``schedule``: minimum replicas per clock hour learned from the log's earlier days;
* ``reserve``: the spares for the log's steepest ramp and largest step;
* ``behavior``: the HPA's scale-up and scale-down rules from the start-up and the log;
* ``calibration``: the replica the replays run on (the discrete replica's steady states on the
  log's mix), and the manifests replayed from YAML.

Layer: planner.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from replicaplan.autoscalers import engines
from replicaplan.autoscalers.manifest import (
    hpa_manifest,
    keda_scaled_object,
)
from replicaplan.core import _check, calendar
from replicaplan.core.promises import PROMISES, Promises
from replicaplan.core.sizing import SIZING, ReplicaRate, Sizing, default_short_budget
from replicaplan.core.startup import STARTUP, Startup
from replicaplan.economics.cost import Pricing, price_run
from replicaplan.planner.behavior import behavior, scale_down_window_min
from replicaplan.planner.calibration import hpa_replay, keda_replay, measured_replica
from replicaplan.planner.operating import (
    MIN_HOLDABLE_CONCURRENCY,
    OperatingPoint,
    ScalingSignal,
    bill_by_phase,
    operating_point,
    phase_seconds_at,
    scaling_signal,
)
from replicaplan.planner.replay import (
    POLICY_KINDS,
    SENSITIVITY_STARTUPS,
    SHORT_BUDGET,
    ReplayRow,
    ScheduleScore,
    StartupSensitivity,
    compare_schedules,
    recommend,
    replay,
    startup_sensitivity,
)
from replicaplan.planner.reserve import largest_step_reserve, spares_for, steepest_ramp_reserve
from replicaplan.planner.schedule import SCHEDULE_MIN_DAYS, schedule
from replicaplan.serving.catalogue import replica_hour_price
from replicaplan.serving.fluid import MeasuredReplica, replicas_needed
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.control import FleetRun
from replicaplan.simulation.day import SCALE_DOWN_WINDOW_MIN
from replicaplan.traffic.forecast import WEEKDAY_MIN_DAYS, days_covered, learned_forecast, weekdays
from replicaplan.traffic.loadgen import AZURE_CONVERSATION, LengthMix
from replicaplan.traffic.logs import TraceFile

# the planner's names, one import for the chapters: ``from replicaplan.planner import plan``
__all__ = [
    "POLICY_KINDS",
    "SCHEDULE_MIN_DAYS",
    "SENSITIVITY_STARTUPS",
    "SHORT_BUDGET",
    "WEEKDAY_MIN_DAYS",
    "OperatingPoint",
    "ScheduleScore",
    "compare_schedules",
    "default_short_budget",
    "Sizing",
    "ReplicaRate",
    "weekdays",
    "Plan",
    "ReplayRow",
    "ReplicaModel",
    "StartupSensitivity",
    "behavior",
    "days_covered",
    "MIN_HOLDABLE_CONCURRENCY",
    "ScalingSignal",
    "measured_replica",
    "scaling_signal",
    "hpa_replay",
    "keda_replay",
    "largest_step_reserve",
    "learned_forecast",
    "operating_point",
    "plan",
    "recommend",
    "replay",
    "scale_down_window_min",
    "schedule",
    "spares_for",
    "startup_sensitivity",
    "steepest_ramp_reserve",
]


# ------------------------------------------------------------------ the whole plan
@dataclass(frozen=True)
class Plan:
    """Everything ``plan`` finds: the operating point, the policies over the log's traffic, the
    recommendation, the schedule and the autoscaler's manifests with their replay."""

    point: OperatingPoint
    replica_rate: ReplicaRate
    """μ* of ``point`` at the sizing's ρ*: what every replay, reserve and count was sized on."""
    rate: np.ndarray
    start_s: float
    """Minute 0 of ``rate`` on ``timezone``'s wall clock (epoch seconds plus its offset)."""
    timezone: str
    """The IANA zone of the schedule's hours and of the cron triggers."""
    offset_changes: bool
    """True when the log spans a summer-time change of ``timezone``: hours after it were
    learned an hour off."""
    startup: Startup
    pricing: Pricing
    """A replica-hour's price (its GPUs × the price of a GPU-hour) and the log's mean answer:
    what every replay of the plan is priced at."""
    price_per_gpu_hour: float
    gpus: int
    currency: str
    rows: list[ReplayRow]
    recommended: ReplayRow
    why: str
    short_budget: float
    """The share of requests the recommendation was allowed to leave beyond capacity."""
    schedule: list[int] | None
    """Minimum replicas per clock hour of ``timezone``, learned from two days or more (24
    values; 168, 24 per weekday from Sunday, from two weeks on); else None."""
    min_replicas: int
    max_replicas: int
    hpa: dict
    keda: dict
    adapter: dict
    """The prometheus-adapter rule exposing the HPA's Pods metric from the engine's series."""
    replica: MeasuredReplica
    """The discrete replica's steady states on the log's mix, which both replays ran on."""
    scaling: ScalingSignal
    """What the manifests scale on, and why."""
    phase_s: tuple[float, float]
    """Replica seconds of an input token and of an output token at the operating point."""
    hpa_run: FleetRun
    keda_run: FleetRun | None
    """The KEDA object replayed with its cron minimums; None when it has none (then it is the
    HPA)."""
    sensitivity: StartupSensitivity | None = None
    """The policies at each of ``SENSITIVITY_STARTUPS`` and the plan's own start-up, computed
    once by ``plan(..., sensitivity=True)`` (what a report shows); None when not asked for."""
    replica_source: str = "the running example"
    """Where the replica's numbers come from (``ReplicaModel.source``): the report says it, and
    how far such a replica is to be trusted."""

    @property
    def price_per_replica_hour(self) -> float:
        """Price of a replica-hour: its GPUs × the price of a GPU-hour."""
        return self.pricing.price_per_replica_hour

    def cost_per_million(self, run: FleetRun) -> float:
        """A replay's price per million output tokens (``cost.price_run``)."""
        return price_run(run.paid_hours, float(run.served.sum()), self.pricing)[2]

    @property
    def phase_prices(self) -> tuple[float, float]:
        """The recommended policy's bill split into a price per million input tokens and one
        per million output tokens, by the replica time each takes at the operating point
        (``cost.split_by_phase``): prefill compute for an input token, TPOT(b)/b for an output
        token at the b = L* sequences a replica runs there."""
        return bill_by_phase(self.recommended.priced, self.point, self.phase_s)

    @property
    def hpa_cost_per_million(self) -> float:
        """The replayed HPA's price per million output tokens."""
        return self.cost_per_million(self.hpa_run)


def max_replicas_for(rate, replica_rate: ReplicaRate, low: int, given: int | None) -> int:
    """The manifests' ``maxReplicas``: ``given`` (an operator's ``Sizing.max_replicas``, checked
    there), or twice the busiest minute's fleet 2 ⌈λ_max/(ρ*μ*)⌉ (at least ``low`` + 1): a
    safety margin, not what keeps the autoscaler from running away (its signal does that:
    ``operating.SIGNAL``). A ceiling under ``low``, the floor the log sets, is refused."""
    if given is not None:
        if given < low:
            raise ValueError(
                f"max_replicas must be >= {low} (the quietest minute's fleet or min_replicas, the "
                "manifests' "
                f"minReplicas), got {given}"
            )
        return given
    return max(low + 1, 2 * replicas_needed(float(np.max(rate)), replica_rate))


def plan(
    traffic,
    model: ReplicaModel | None = None,
    *,
    lengths: TraceFile | LengthMix | None = None,
    sizing: Sizing = SIZING,
    promises: Promises = PROMISES,
    startup: Startup = STARTUP,
    wake_query: str | None = None,
    latency_guard: bool = False,
    keda_polling_s: int | None = None,
    keda_cooldown_s: int | None = None,
    price_per_gpu_hour: float | None = None,
    name: str = "llm",
    metric_name: str | None = None,
    prometheus: str = "http://prometheus.monitoring.svc:9090",
    engine: str = "vllm",
    namespace: str = "default",
    served_model: str | None = None,
    start_s: float | None = None,
    timezone: str = calendar.UTC,
    n_requests: int = 4000,
    seed: int = 0,
    sensitivity: bool = False,
    precision: float | None = 0.02,
    signal: str | None = None,
) -> Plan:
    """Plan a fleet for ``traffic``: a request log (``logs.read_trace``) or a per-minute rate
    series (``logs.read_rate_series``), served by ``model`` (the running example's replica by
    default) within the promises, paid ``price_per_gpu_hour`` for each of its GPUs (by default
    the replica's own GPU price: the catalogue's list price, or the running example's 2 €).
    The fleet is sized by ``sizing`` (ρ*, the bounds, the short budget: ``core.sizing``). The
    recommendation is the cheapest policy that leaves at most its short budget of the requests
    beyond capacity (by default ``default_short_budget`` of the promises' quota: 1 % for 90 %).

    The length mix is the log's own, or ``lengths``; a rate series carries no lengths, so it
    takes ``lengths`` or the Azure conversation mix. Errors, each naming the parameter: promises
    no load meets, a log shorter than the scale-down window, a log without requests. μ* is
    measured until its standard error is ``precision`` of it (``capacity.replicate``).
    ``Sizing.min_replicas`` replaces the quietest minute's fleet as the manifests' floor (the
    replays keep to it). ``min_replicas=0`` scales to zero, through KEDA alone, and needs
    ``wake_query``: the PromQL of the requests arriving a second in front of the engine, which
    wakes the fleet (``manifest.keda_scaled_object``'s ``wake``); the HPA and its replay keep a
    floor of 1, an upper bound on what the idle hours cost. ``latency_guard`` adds to the
    ScaledObject a trigger on the fleet's quota-quantile of TTFT against the TTFT promise
    (``manifest.keda_scaled_object``'s ``guard``); the replays do not model it (they have no
    TTFT), so it only ever adds replicas to what they show. ``keda_polling_s`` and
    ``keda_cooldown_s`` go to the ScaledObject's ``pollingInterval`` and ``cooldownPeriod``
    (KEDA's defaults, 30 s and 300 s, when None). ``timezone`` (an IANA zone) is the clock the
    schedule is learned on and its cron triggers fire in: each minute of the log is placed on
    that zone's wall clock by its offset at the log's first minute (KEDA then follows summer
    time itself; ``Plan.offset_changes`` says when the log spans a change). The plan's
    ``start_s`` is that wall clock.
    """
    model = model or ReplicaModel()
    if isinstance(traffic, TraceFile):
        rate = _check.rates("traffic", traffic.rate_per_minute())  # checked once, for every step
        lengths = lengths or traffic
        start_s = traffic.start if start_s is None else start_s
    else:
        rate = _check.rates("traffic", traffic)
        lengths = lengths or AZURE_CONVERSATION
        start_s = start_s or 0.0
    utc_start_s = float(start_s)
    start_s = calendar.wall_clock_s(utc_start_s, timezone)
    if not rate.any():
        raise ValueError("traffic holds no requests")
    window = scale_down_window_min(startup)
    if rate.size < window:
        raise ValueError(
            f"traffic covers {rate.size} minute(s), shorter than the scale-down window "
            f"({window} min = max({SCALE_DOWN_WINDOW_MIN}, T_start)): a replay could not "
            "show one scale-down; give a log of at least that many minutes"
        )
    if price_per_gpu_hour is None:
        if model.price_per_gpu_hour is None:
            raise ValueError(
                "price_per_gpu_hour must be given: the replica's GPU has no list price"
            )
        price_per_gpu_hour = model.price_per_gpu_hour
    price_per_gpu_hour = _check.positive("price_per_gpu_hour", price_per_gpu_hour)
    price_per_replica_hour = replica_hour_price(price_per_gpu_hour, model.gpus)
    point = operating_point(
        lengths,
        model,
        sizing=sizing,
        promises=promises,
        n_requests=n_requests,
        seed=seed,
        precision=precision,
    )
    per = sizing.at(point.mu_star)  # μ* measured, ρ* the sizing's: one ReplicaRate for the plan
    pricing = Pricing(price_per_replica_hour, point.mean_output)  # checked once, for every run
    rows = replay(rate, per, startup=startup, pricing=pricing, start_s=start_s)
    short_budget = sizing.budget(promises)
    best, why = recommend(rows, sizing, promises)
    enough = days_covered(rate, start_s) >= SCHEDULE_MIN_DAYS
    table = schedule(rate, per, start_s) if enough else None
    low = max(1, replicas_needed(float(rate.min()), per))
    if sizing.min_replicas is not None:  # the operator's floor, above or below the quietest's
        low = sizing.min_replicas
    if (low == 0) != (wake_query is not None):
        raise ValueError(
            "min_replicas=0 (scale to zero) and wake_query go together: the engine's own "
            "series vanish with its last pod, so only a query in front of it can wake the fleet"
        )
    to_zero = low == 0
    low = max(low, 1)  # the HPA's floor (and its replay's); KEDA takes the fleet to 0 and back
    high = max_replicas_for(rate, per, low, sizing.max_replicas)
    up, down = behavior(rate, per, startup)
    mix = lengths.length_mix() if isinstance(lengths, TraceFile) else lengths
    measured = measured_replica(model, mix, point, n_requests=n_requests, seed=seed)
    scaling = scaling_signal(point, measured, signal)
    metric_name = metric_name or scaling.metric_name
    eng = engines.engine(engine)
    served_model = served_model or name
    query = engines.keda_query(
        eng, scaling.signal, namespace, served_model, model.kv_capacity_tokens, deployment=name
    )
    adapter = {
        "rules": [engines.adapter_rule(eng, scaling.signal, metric_name, model.kv_capacity_tokens)]
    }
    # the same target, bounds and behavior in both manifests
    shared = dict(
        min_replicas=low,
        max_replicas=high,
        up=up,
        down=down,
        metric_name=metric_name,
        namespace=namespace,  # every object says where it goes (kubectl apply -f, no -n)
    )
    hpa = hpa_manifest(name, scaling.target, **shared)
    scheduled = table if table is not None and best.policy.forecast else None
    keda = keda_scaled_object(
        name,
        scaling.target,
        **shared,
        prometheus=prometheus,
        schedule=scheduled,
        lead_min=startup.minutes,
        timezone=timezone,
        # without a metric, the fleet the busiest minute needs (the always-on policy's)
        fallback_replicas=replicas_needed(float(rate.max()), per),
        polling_interval_s=keda_polling_s,
        cooldown_period_s=keda_cooldown_s,
        query=query,
        # arrivals a second in front of the engine, per replica at the target: ρ*μ*
        wake=(wake_query, per.rps) if to_zero else None,
        guard=(
            engines.ttft_quantile_query(
                eng, promises.quota, namespace, served_model, deployment=name
            ),
            promises.ttft_slo_s,
        )
        if latency_guard
        else None,
    )
    # the replays start where the policies' do: the first minute's fleet at the target
    first = replicas_needed(float(rate[0]), per)
    run = hpa_replay(
        rate,
        hpa,
        measured,
        initial=first,
        startup=startup,
        signal=scaling.signal,
        seed=seed,
    )
    keda_run = None
    if scheduled is not None:
        keda_run = keda_replay(
            rate,
            keda,
            measured,
            initial=first,
            startup=startup,
            start_s=start_s,
            signal=scaling.signal,
            seed=seed,
        )
    made = Plan(
        replica_source=model.source,
        point=point,
        replica_rate=per,
        rate=rate,
        start_s=float(start_s),
        timezone=timezone,
        offset_changes=calendar.offset_changes(utc_start_s, utc_start_s + 60 * rate.size, timezone),
        startup=startup,
        pricing=pricing,
        price_per_gpu_hour=price_per_gpu_hour,
        gpus=model.gpus,
        currency=model.currency,
        rows=rows,
        recommended=best,
        why=why,
        short_budget=short_budget,
        schedule=table,
        min_replicas=low,
        max_replicas=high,
        hpa=hpa,
        keda=keda,
        adapter=adapter,
        replica=measured,
        scaling=scaling,
        phase_s=phase_seconds_at(point, model),
        hpa_run=run,
        keda_run=keda_run,
        sensitivity=None,
    )
    return with_sensitivity(made) if sensitivity else made


def with_sensitivity(p: Plan) -> Plan:
    """``p`` with its policies replayed at each start-up of ``SENSITIVITY_STARTUPS`` and at its
    own (``startup_sensitivity``), what a report shows; ``p`` itself when it has them."""
    if p.sensitivity is not None:
        return p
    return replace(
        p,
        sensitivity=startup_sensitivity(
            p.rate,
            p.replica_rate,
            np.unique(np.r_[SENSITIVITY_STARTUPS, p.startup.minutes]),
            pricing=p.pricing,
            start_s=p.start_s,
        ),
    )

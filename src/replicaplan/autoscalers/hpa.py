"""The Kubernetes Horizontal Pod Autoscaler, decision for decision as its controller computes it.

Followed from ``kubernetes/kubernetes``, ``pkg/controller/podautoscaler/``, in our own code:

* ``replica_calculator.go``: ``groupPods`` (which pods are ignored, unready or missing a
  metric), ``GetResourceReplicas`` (Utilization targets, request-weighted integer percent, the
  fallback of max(100 %, target) for missing pods on a scale-down), ``calcPlainMetricReplicas``
  (AverageValue targets of Resource and Pods metrics, in milli-units), ``getUsageRatioReplicaCount``
  (Object and External metrics with a Value target), ``GetObjectPerPodMetricReplicas`` and
  ``GetExternalPerPodMetricReplicas`` (AverageValue targets), and the ``Tolerances`` type
  (separate scale-up and scale-down tolerances, the ``tolerance`` field of ``behavior``);
* ``metrics/utilization.go``: ``GetResourceUtilizationRatio`` and ``GetMetricUsageRatio``;
* ``horizontal.go``: ``reconcileAutoscaler`` (spec.replicas = 0 with minReplicas > 0 disables
  autoscaling; a count outside [min, max] is brought back first), ``computeReplicasForMetrics``
  (the largest proposal of several metrics; no scale-down while a metric is invalid),
  ``normalizeDesiredReplicas`` (no ``behavior``: the 300 s downscale stabilization and a scale-up
  limit of max(2 · current, 4)), ``normalizeDesiredReplicasWithBehaviors`` with
  ``stabilizeRecommendationWithBehaviors`` and ``convertDesiredReplicasWithBehaviorRate``
  (windows, Pods/Percent policies over their periods, selectPolicy), and
  ``recordInitialRecommendation`` (a new autoscaler's first recommendation is the current count).

Replica counts are rounded up by the displayed rule ⌈N_r · metric/target⌉ (``proportional_rule``),
which ignores binary noise below 10⁻⁹ where the controller's math.Ceil (Go) would not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from replicaplan.core import _check, derived

if TYPE_CHECKING:
    import sympy as sp

# ------------------------------------------------------------------ the proportional rule


def proportional_rule_expression() -> sp.Expr:
    """N_r' = ⌈N_r · metric / target⌉ (applied only outside the tolerance band)."""
    import sympy as sp

    from replicaplan.core.symbols import N_r, metric, target

    return sp.ceiling(N_r * metric / target)


def tolerance_band() -> tuple[sp.Expr, sp.Expr]:
    """Metric values that cause no change: |metric/target − 1| ≤ tolerance, solved for metric."""
    import sympy as sp

    from replicaplan.core.symbols import metric, target, tolerance

    lo = sp.solve(sp.Eq(metric / target, 1 - tolerance), metric)[0]
    hi = sp.solve(sp.Eq(metric / target, 1 + tolerance), metric)[0]
    return lo, hi


def derivations() -> dict:
    """The numeric functions ``core.derived`` holds for this module (see ``tools/derive.py``)."""
    from replicaplan.core.symbols import N_r, metric, target

    rule, how = proportional_rule_expression(), "proportional_rule_expression()"
    return {"proportional_rule": ((N_r, metric, target), rule, "math", how)}


def proportional_rule(replicas: float, average: float, target_value: float) -> int:
    """⌈N_r · metric/target⌉ for ``replicas`` replicas whose metric averages ``average``.

    >>> proportional_rule(4, 20.0, 10.0)
    8
    """
    return int(derived.proportional_rule(replicas, average, target_value))


@dataclass(frozen=True)
class Tolerances:
    """No change while 1 − scale_down ≤ ratio ≤ 1 + scale_up (replica_calculator.go)."""

    scale_down: float = 0.1
    scale_up: float = 0.1

    def __post_init__(self):
        # any tolerance >= 0, as upstream (TestReplicaCalcConfigurableTolerance uses 2.0): a
        # scale-down tolerance of 1 or more never scales down
        _check.non_negative("scale_down tolerance", self.scale_down)
        _check.non_negative("scale_up tolerance", self.scale_up)

    def within(self, ratio: float) -> bool:
        return (1.0 - self.scale_down) <= ratio <= (1.0 + self.scale_up)


# ------------------------------------------------------------------ pods and metrics


@dataclass(frozen=True)
class Pod:
    """A pod as the replica calculator sees it.

    ``value`` is its metric sample (None: missing), in the metric's unit (cores for CPU);
    ``request`` its resource request in the same unit (Utilization targets only). For CPU
    metrics a Running pod counts as unready while ``initializing`` (started less than the CPU
    initialization period ago, 5 min by default) if it is not ready or its sample predates a
    whole metric window since it became ready (``fresh_sample`` False); after that period only
    if it is not ready and never has been (``ever_ready`` False).
    """

    value: float | None = None
    request: float = 1.0
    phase: str = "Running"
    ready: bool = True
    deleting: bool = False
    initializing: bool = False
    fresh_sample: bool = True
    ever_ready: bool = True

    def __post_init__(self):
        if self.phase not in ("Running", "Pending", "Failed", "Succeeded"):
            raise ValueError(
                f"phase must be Running, Pending, Failed or Succeeded, got {self.phase!r}"
            )
        if self.value is not None:
            _check.non_negative("value", self.value)
        _check.non_negative("request", self.request)


def group_pods(pods, cpu: bool) -> tuple[int, set, set, set]:
    """(ready count, unready, missing, ignored) pod indices, as ``groupPods`` sorts them."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for i, pod in enumerate(pods):
        if pod.deleting or pod.phase == "Failed":
            ignored.add(i)
        elif pod.phase == "Pending":
            unready.add(i)
        elif pod.value is None:
            missing.add(i)
        elif cpu and (
            (pod.initializing and (not pod.ready or not pod.fresh_sample))
            or (not pod.initializing and not pod.ready and not pod.ever_ready)
        ):
            unready.add(i)
        else:
            ready += 1
    return ready, unready, missing, ignored


KINDS = {
    "Resource": ("Utilization", "AverageValue"),
    "Pods": ("AverageValue",),
    "Object": ("Value", "AverageValue"),
    "External": ("Value", "AverageValue"),
}


@dataclass(frozen=True)
class MetricSpec:
    """One entry of ``spec.metrics``: its kind, its target type and the target.

    Utilization targets are integer percent of the pods' requests; the others are values in the
    metric's unit (compared in milli-units, as Kubernetes quantities are).
    """

    kind: str
    target_type: str
    target: float
    resource: str = "cpu"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"metric kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.target_type not in KINDS[self.kind]:
            raise ValueError(
                f"target type of a {self.kind} metric must be one of "
                f"{', '.join(KINDS[self.kind])}, got {self.target_type!r}"
            )
        _check.positive("target", self.target)
        if self.target_type == "Utilization" and self.target != int(self.target):
            raise ValueError(f"a Utilization target is an integer percent, got {self.target!r}")


def _milli(x: float) -> int:
    """A quantity as written (a target, a request, a metrics-server sample) in milli-units."""
    return int(round(x * 1000))


def adapter_milli(x: float) -> int:
    """A Prometheus sample as prometheus-adapter serves it to the HPA (a Pods or Object metric):
    ``resource.NewMilliQuantity(int64(value*1000.0))``, the product truncated toward zero
    (``pkg/custom-provider/provider.go``, ``metricFor``): 11.0009 is 11,000 m."""
    return int(x * 1000.0)


def keda_milli(x: float) -> int:
    """A value as KEDA's metrics server serves it (an External metric): printed with ``%.3f``
    and parsed as a quantity, so rounded to the nearest milli-unit; NaN, infinities and negatives
    are 0 (``pkg/scalers/scaler.go``, ``quantityFromFloat64``): 0.0025 is 3 m."""
    if not math.isfinite(x) or x < 0:
        return 0
    return int(Decimal(f"{x:.3f}") * 1000)


def _ratio_up_down(usage_ratio: float, new_ratio: float) -> bool:
    return (usage_ratio < 1.0 < new_ratio) or (usage_ratio > 1.0 > new_ratio)


def _utilization(metrics: dict, requests: dict, target_pct: float) -> float:
    total = sum(metrics.values())
    requested = sum(requests[i] for i in metrics)
    if requested == 0:
        raise ValueError("the pods with metrics request none of the resource")
    return int(total * 100 // requested) / target_pct


def _usage(metrics: dict, target_milli: int) -> float:
    return (sum(metrics.values()) // len(metrics)) / target_milli


def desired_replicas(
    spec: MetricSpec,
    current: int,
    *,
    pods=None,
    value=None,
    tolerances: Tolerances = Tolerances(),
) -> int:
    """The replicas one metric asks for, from ``pods`` (Resource, Pods) or ``value`` (Object,
    External: one number, or a list of series that External metrics sum)."""
    current = _check.integer("current", current, minimum=0)
    if spec.kind in ("Resource", "Pods"):
        if not pods:
            raise ValueError(f"a {spec.kind} metric needs the pods and their samples")
        return _pod_metric_replicas(spec, current, list(pods), tolerances)
    if value is None:
        raise ValueError(f"an {spec.kind} metric needs its value")
    values = value if isinstance(value, list | tuple) else [value]
    served = keda_milli if spec.kind == "External" else adapter_milli
    usage = sum(served(_check.non_negative("value", v)) for v in values)
    target_milli = _milli(spec.target)
    if spec.target_type == "AverageValue":  # GetObject/ExternalPerPodMetricReplicas
        if current == 0:
            return proportional_rule(1, usage, target_milli)
        if tolerances.within(usage / (target_milli * current)):
            return current
        return proportional_rule(1, usage, target_milli)
    ratio = usage / target_milli  # getUsageRatioReplicaCount
    if current == 0:
        return proportional_rule(1, ratio, 1)
    if tolerances.within(ratio):
        return current
    ready = current if pods is None else sum(p.phase == "Running" and p.ready for p in pods)
    return proportional_rule(ready, ratio, 1)


def _pod_metric_replicas(spec: MetricSpec, current: int, pods: list, tol: Tolerances) -> int:
    cpu = spec.kind == "Resource" and spec.resource == "cpu"
    ready, unready, missing, ignored = group_pods(pods, cpu)
    served = _milli if spec.kind == "Resource" else adapter_milli
    metrics = {
        i: served(p.value)
        for i, p in enumerate(pods)
        if p.value is not None and i not in unready and i not in ignored
    }
    if not metrics:
        raise ValueError("no metrics for the targeted pods (they might all be unready)")
    if spec.target_type == "Utilization":
        requests = {i: _milli(p.request) for i, p in enumerate(pods)}
        ratio = _utilization(metrics, requests, spec.target)
        fallback = {i: requests[i] * max(100, int(spec.target)) // 100 for i in missing}
    else:
        target_milli = _milli(spec.target)
        ratio = _usage(metrics, target_milli)
        fallback = {i: target_milli for i in missing}

    up_with_unready = bool(unready) and ratio > 1.0
    if not up_with_unready and not missing:
        return current if tol.within(ratio) else proportional_rule(ready, ratio, 1)
    if missing:
        if ratio < 1.0:  # on a scale-down, missing pods count as using the fallback
            metrics.update(fallback)
        elif ratio > 1.0:  # on a scale-up, as using nothing
            metrics.update({i: 0 for i in missing})
    if up_with_unready:
        metrics.update({i: 0 for i in unready})
    if spec.target_type == "Utilization":
        new_ratio = _utilization(metrics, requests, spec.target)
    else:
        new_ratio = _usage(metrics, target_milli)
    if tol.within(new_ratio) or _ratio_up_down(ratio, new_ratio):
        return current
    proposal = proportional_rule(len(metrics), new_ratio, 1)
    if (new_ratio < 1.0 and proposal > current) or (new_ratio > 1.0 and proposal < current):
        return current
    return proposal


def uniform_pod_metric_replicas(
    target_milli: int, current: int, value_milli: int, ready: int, unready: int, tol: Tolerances
) -> int:
    """``_pod_metric_replicas`` for a Pods metric with an AverageValue target when every ready
    pod reports the same sample (``value_milli``, in milli-units), none is missing and
    ``unready`` pods are Pending: the case of a simulated fleet that spreads its requests evenly.
    Integers only and no ``Pod`` objects, so a closed loop can call it every sync; the general
    path gives the same count (tested on a grid of cases)."""
    if ready <= 0:
        raise ValueError("no metrics for the targeted pods (they might all be unready)")
    ratio = (ready * value_milli // ready) / target_milli
    if not (unready and ratio > 1.0):
        return current if tol.within(ratio) else proportional_rule(ready, ratio, 1)
    # a scale-up with Pending pods: they count as using nothing
    new_ratio = (ready * value_milli // (ready + unready)) / target_milli
    if tol.within(new_ratio) or _ratio_up_down(ratio, new_ratio):
        return current
    proposal = proportional_rule(ready + unready, new_ratio, 1)
    if (new_ratio < 1.0 and proposal > current) or (new_ratio > 1.0 and proposal < current):
        return current
    return proposal


def replica_count(values, target: float, *, unready: int = 0, tolerance: float = 0.1) -> int:
    """A Pods metric with an AverageValue target: one sample per running replica (None where
    it is missing) and ``unready`` replicas still Pending.

    >>> replica_count([20.0] * 4, 10.0), replica_count([10.5] * 4, 10.0)
    (8, 4)
    """
    pods = [Pod(value=v) for v in values] + [Pod(phase="Pending")] * _check.integer(
        "unready", unready, minimum=0
    )
    spec = MetricSpec("Pods", "AverageValue", target)
    tol = Tolerances(tolerance, tolerance)
    return desired_replicas(spec, len(pods), pods=pods, tolerances=tol)


def external_replica_count(
    current: int, total: float, target_average: float, *, tolerance: float = 0.1
) -> int:
    """An External metric with an AverageValue target (how KEDA feeds a queue length):
    ⌈total/target⌉ unless total/(target · current) is within the tolerance of 1."""
    spec = MetricSpec("External", "AverageValue", target_average)
    return desired_replicas(spec, current, value=total, tolerances=Tolerances(tolerance, tolerance))


# ------------------------------------------------------------------ stabilization


def stabilize(
    current: int,
    desired: int,
    history,
    now: float,
    *,
    up_window_s: float = 0.0,
    down_window_s: float = 300.0,
) -> int:
    """``stabilizeRecommendationWithBehaviors``: hold the count inside the windows' bounds.

    ``history`` is a list of (time_s, recommendation). The result is ``current`` clamped into
    [min(desired, recommendations newer than now − up_window), max(desired, recommendations
    newer than now − down_window)]: it rises only as far as every recent recommendation agrees,
    and falls only to the highest recent one.
    """
    current = _check.integer("current", current, minimum=0)
    desired = _check.integer("desired", desired, minimum=0)
    up_window_s = _check.non_negative("up_window_s", up_window_s)
    down_window_s = _check.non_negative("down_window_s", down_window_s)
    return _stabilize(current, desired, history, now, up_window_s, down_window_s)


def stabilize_without_behavior(desired: int, history, now: float, window_s: float = 300.0) -> int:
    """``stabilizeRecommendation`` (horizontal.go), the path of an HPA without ``behavior``: the
    largest of ``desired`` and every recommendation not older than the downscale window. It is
    not bounded by the current count: current 4, desired 5 and a recommendation of 8 a minute
    ago give 8 (the scale-up limit then applies)."""
    desired = _check.integer("desired", desired, minimum=0)
    window_s = _check.non_negative("window_s", window_s)
    return _stabilize_max(desired, history, now, window_s)


def _stabilize_max(desired, history, now, window_s) -> int:
    cutoff = now - window_s  # upstream drops a sample only when it is Before the cutoff
    return max([desired, *(rec for when, rec in history if when >= cutoff)])


def _stabilize(current, desired, history, now, up_window_s, down_window_s) -> int:
    """``stabilize`` on checked values (the autoscaler's loop checks them once, when built)."""
    cut_up, cut_down = now - up_window_s, now - down_window_s
    up = min([desired, *(rec for when, rec in history if when > cut_up)])
    down = max([desired, *(rec for when, rec in history if when > cut_down)])
    return min(max(current, up), down)


# ------------------------------------------------------------------ rate limits


@dataclass(frozen=True)
class ScalingPolicy:
    """One HPAScalingPolicy: at most ``value`` pods, or ``value`` percent, per ``period_s``."""

    kind: str
    value: float
    period_s: float

    def __post_init__(self):
        if self.kind not in ("Pods", "Percent"):
            raise ValueError(f"kind must be 'Pods' or 'Percent', got {self.kind!r}")
        _check.positive("value", self.value)
        if self.kind == "Pods":
            _check.integer("value of a Pods policy", self.value, minimum=1)
        _check.positive("period_s", self.period_s)


@dataclass(frozen=True)
class Rules:
    """HPAScalingRules for one direction: policies, selectPolicy, a stabilization window and an
    optional tolerance (None: the controller's default)."""

    policies: tuple = ()
    select: str = "Max"
    stabilization_s: float = 0.0
    tolerance: float | None = None

    def __post_init__(self):
        if self.select not in ("Max", "Min", "Disabled"):
            raise ValueError(f"select must be 'Max', 'Min' or 'Disabled', got {self.select!r}")
        _check.non_negative("stabilization_s", self.stabilization_s)
        if self.tolerance is not None:
            _check.non_negative("tolerance", self.tolerance)
        if self.select != "Disabled" and not self.policies:
            raise ValueError("policies must not be empty unless select is 'Disabled'")

    @staticmethod
    def default_up() -> Rules:
        """The API's default scale-up: 4 pods or 100 % per 15 s, whichever is more; no window."""
        return Rules((ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)), "Max", 0.0)

    @staticmethod
    def default_down() -> Rules:
        """The API's default scale-down: 100 % per 15 s, after a 300 s stabilization window."""
        return Rules((ScalingPolicy("Percent", 100, 15),), "Max", 300.0)


def _changes_within(events, now: float, period_s: float) -> tuple[int, int]:
    added = sum(d for t, d in events if t > now - period_s and d > 0)
    removed = -sum(d for t, d in events if t > now - period_s and d < 0)
    return added, removed


def _rate_limit(current: int, events, now: float, rules: Rules, *, up: bool) -> int:
    """``calculateScaleUpLimitWithScalingRules`` / ``calculateScaleDownLimitWithBehaviors``.

    Each policy counts from the replicas at the start of its period (current − added + removed
    within it); "Max" takes the policy that allows the biggest change, "Min" the smallest.
    """
    if rules.select == "Disabled":
        return current
    limits = []
    for p in rules.policies:
        added, removed = _changes_within(events, now, p.period_s)
        start = current - added + removed
        if p.kind == "Pods":
            limits.append(start + int(p.value) if up else start - int(p.value))
        elif up:
            limits.append(_check.ceil_count(start * (1 + p.value / 100)))
        else:
            limits.append(_check.floor_count(start * (1 - p.value / 100)))
    permissive, strict = (max, min) if up else (min, max)
    return permissive(limits) if rules.select == "Max" else strict(limits)


def scale_up_limit(current: int, events, now: float, rules: Rules) -> int:
    """The most replicas the up rules allow now."""
    return _rate_limit(current, events, now, rules, up=True)


def scale_down_limit(current: int, events, now: float, rules: Rules) -> int:
    """The fewest replicas the down rules allow now."""
    return _rate_limit(current, events, now, rules, up=False)


def limit_rate(
    current: int,
    desired: int,
    events,
    now: float,
    *,
    up: Rules | None = None,
    down: Rules | None = None,
    min_replicas: int = 1,
    max_replicas: int = 10_000,
) -> int:
    """``convertDesiredReplicasWithBehaviorRate``: the behavior's rate limits and min/max.

    ``events`` is a list of (time_s, signed change in replicas). Up: never past the up limit
    (at least ``current``) nor ``max_replicas``; down: never below the down limit (at most
    ``current``) nor ``min_replicas``.
    """
    current = _check.integer("current", current, minimum=0)
    desired = _check.integer("desired", desired, minimum=0)
    min_replicas, max_replicas = _check_bounds(min_replicas, max_replicas)
    return _limit_rate(
        current,
        desired,
        events,
        now,
        up or Rules.default_up(),
        down or Rules.default_down(),
        min_replicas,
        max_replicas,
    )


def _limit_rate(current, desired, events, now, up, down, min_replicas, max_replicas) -> int:
    """``limit_rate`` on checked values."""
    if desired > current:
        ceiling = min(max(scale_up_limit(current, events, now, up), current), max_replicas)
        return min(desired, ceiling)
    if desired < current:
        floor = max(min(scale_down_limit(current, events, now, down), current), min_replicas)
        return max(desired, floor)
    return desired


def limit_without_behavior(current: int, desired: int, min_replicas: int, max_replicas: int) -> int:
    """``convertDesiredReplicasWithRules``: no ``behavior``, so a scale-up is capped at
    max(2 · current, 4) per decision and the count is kept in [min, max]."""
    ceiling = min(max_replicas, max(2 * current, 4))
    return max(min_replicas, min(desired, ceiling))


def _check_bounds(min_replicas: int, max_replicas: int) -> tuple[int, int]:
    min_replicas = _check.integer("min_replicas", min_replicas, minimum=0)
    max_replicas = _check.integer("max_replicas", max_replicas, minimum=1)
    if min_replicas > max_replicas:
        raise ValueError(
            f"min_replicas must be <= max_replicas, got {min_replicas} > {max_replicas}"
        )
    return min_replicas, max_replicas


# ------------------------------------------------------------------ the HPA controller


@dataclass
class HorizontalAutoscaler:
    """The HPA loop of one autoscaler: the metrics' proposal, then stabilization and limits.

    With ``behavior`` (the default here, with the API's default rules ``up`` and ``down``) the
    windows and policies apply; with ``behavior=False`` the controller's plain path applies: the
    ``downscale_window_s`` stabilization and a scale-up cap of max(2 · current, 4). ``replicas``
    is the target's ``spec.replicas``; ``metric`` is "per-replica" (``step`` gets one value per
    ready replica, a Pods metric) or "external" (``step`` gets a total, an External metric with
    an AverageValue target).
    """

    target: float
    metric: str = "per-replica"
    tolerance: float = 0.1
    up: Rules = field(default_factory=Rules.default_up)
    down: Rules = field(default_factory=Rules.default_down)
    behavior: bool = True
    downscale_window_s: float = 300.0
    min_replicas: int = 1
    max_replicas: int = 10_000
    sync_s: float = 15.0
    replicas: int = 1
    history: list = field(default_factory=list)
    events: list = field(default_factory=list)
    _tolerances: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        _check.positive("target", self.target)
        _check.non_negative("tolerance", self.tolerance)
        _check.positive("sync_s", self.sync_s)
        _check.non_negative("downscale_window_s", self.downscale_window_s)
        _check.integer("replicas", self.replicas, minimum=0)
        if self.metric not in ("per-replica", "external"):
            raise ValueError(f"metric must be 'per-replica' or 'external', got {self.metric!r}")
        _check_bounds(self.min_replicas, self.max_replicas)

    @property
    def tolerances(self) -> Tolerances:
        """The behavior's per-direction tolerances where set, else the controller's default
        (built again only when one of the fields it comes from has changed)."""
        key = (self.tolerance, self.behavior, self.up, self.down)
        if self._tolerances is None or self._tolerances[0] != key:
            down = (
                self.down.tolerance if self.behavior and self.down.tolerance is not None else None
            )
            up = self.up.tolerance if self.behavior and self.up.tolerance is not None else None
            tol = Tolerances(
                self.tolerance if down is None else down, self.tolerance if up is None else up
            )
            self._tolerances = (key, tol)
        return self._tolerances[1]

    def propose(self, spec: MetricSpec, *, uniform=None, value=None) -> int:
        """The replicas one metric of ``spec.metrics`` asks for, with this autoscaler's
        tolerances per direction: ``uniform`` = (sample, ready, unready) for a Pods metric whose
        ready pods all report ``sample``; ``value`` for an External (or Object) metric."""
        tol = self.tolerances
        if uniform is not None:
            sample, ready, unready = uniform
            return uniform_pod_metric_replicas(
                _milli(spec.target), self.replicas, adapter_milli(sample), ready, unready, tol
            )
        return desired_replicas(spec, self.replicas, value=value, tolerances=tol)

    def decide(self, now: float, proposals) -> int:
        """One sync from the metrics' proposals: ``combine_proposals``, then ``apply``."""
        return self.apply(now, combine_proposals(list(proposals), self.replicas))

    def step(self, now: float, values=None, unready: int = 0, total: float | None = None) -> int:
        """One sync: returns the replicas to run (ready + starting) from now on."""
        tol = self.tolerances
        if self.metric == "per-replica":
            pods = [Pod(value=v) for v in values] + [Pod(phase="Pending")] * unready
            spec = MetricSpec("Pods", "AverageValue", self.target)
            desired = desired_replicas(spec, self.replicas, pods=pods, tolerances=tol)
        else:
            if total is None:
                raise ValueError("total must be given for an external metric")
            spec = MetricSpec("External", "AverageValue", self.target)
            desired = desired_replicas(spec, self.replicas, value=total, tolerances=tol)
        return self.apply(now, desired)

    def apply(self, now: float, desired: int | None) -> int:
        """``reconcileAutoscaler`` from the metrics' proposal (the max of several, or None when
        every metric failed) to the new ``spec.replicas``."""
        current = self.replicas
        if not self.history:
            # recordInitialRecommendation: a new autoscaler starts from the current count,
            # so it does not scale down before a window has passed
            self.history.append((now, current))
        if current == 0 and self.min_replicas != 0:
            return 0  # autoscaling is disabled while the target is scaled to zero
        if current > self.max_replicas:
            final = self.max_replicas
        elif current < self.min_replicas:
            final = self.min_replicas
        elif desired is None:
            return current  # no valid metric: no decision
        elif self.behavior:
            stable = _stabilize(
                current,
                desired,
                self.history,
                now,
                self.up.stabilization_s,
                self.down.stabilization_s,
            )
            self.history.append((now, desired))
            final = _limit_rate(
                current,
                stable,
                self.events,
                now,
                self.up,
                self.down,
                self.min_replicas,
                self.max_replicas,
            )
        else:
            stable = _stabilize_max(desired, self.history, now, self.downscale_window_s)
            self.history.append((now, desired))
            final = limit_without_behavior(current, stable, self.min_replicas, self.max_replicas)
        if final != current:
            self.events.append((now, final - current))
        self.replicas = final
        self._forget(now)
        return final

    def _forget(self, now: float) -> None:
        """Drop the recommendations and changes no window can reach any more. Every reader
        filters by time, so this only bounds the lists; they are rebuilt only when their oldest
        entry has expired (they are appended in time order)."""
        keep = max(self.up.stabilization_s, self.down.stabilization_s, self.downscale_window_s)
        if self.history and self.history[0][0] <= now - keep:
            self.history = [(t, r) for t, r in self.history if t > now - keep]
        longest = max([p.period_s for p in (*self.up.policies, *self.down.policies)], default=0)
        if self.events and self.events[0][0] <= now - longest:
            self.events = [(t, d) for t, d in self.events if t > now - longest]


def combine_proposals(proposals, current: int) -> int | None:
    """``computeReplicasForMetrics``: the largest proposal; None (no decision) when every metric
    failed; the current count when a metric failed and the others would scale down."""
    valid = [p for p in proposals if p is not None]
    if not valid:
        return None
    best = max(valid)
    if len(valid) < len(proposals) and best < current:
        return current
    return best

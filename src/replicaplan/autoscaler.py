"""Autoscalers: the Kubernetes Horizontal Pod Autoscaler and Knative's KPA, as pure functions.

Written from the documented behaviour of the two controllers (Kubernetes: "Horizontal Pod
Autoscaling", the algorithm details and the ``behavior`` field of autoscaling/v2; Knative:
"Additional autoscaling configuration for Knative Pod Autoscaler"), in our own code.

The HPA runs three stages every sync period (15 s by default):

1. ``replica_count`` (or ``external_replica_count``): the proportional rule
   N' = ⌈N · metric/target⌉ with a tolerance band, and Kubernetes' corrections for replicas
   whose metric is missing or that are not ready yet;
2. ``stabilize``: the recommendation is held inside [min of the recent recommendations in the
   up window, max of those in the down window], so it scales down only to the highest
   recommendation of the last 300 s by default;
3. ``limit_rate``: the ``behavior`` policies cap how many replicas may be added or removed per
   period (default up: 4 pods or 100 % per 15 s, whichever allows more; down: 100 % per 15 s).

``HorizontalAutoscaler`` composes them and keeps the history; ``KnativeAutoscaler`` is the KPA.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import sympy as sp

from . import _check
from .symbols import N_r, lambdify_once, metric, target, tolerance

# ------------------------------------------------------------------ the proportional rule


def proportional_rule_expression() -> sp.Expr:
    """N_r' = ⌈N_r · metric / target⌉ (applied only outside the tolerance band)."""
    return sp.ceiling(N_r * metric / target)


def tolerance_band() -> tuple[sp.Expr, sp.Expr]:
    """Metric values that cause no change: |metric/target − 1| ≤ tolerance, solved for metric."""
    lo = sp.solve(sp.Eq(metric / target, 1 - tolerance), metric)[0]
    hi = sp.solve(sp.Eq(metric / target, 1 + tolerance), metric)[0]
    return lo, hi


@cache
def _proportional_fn():
    """The displayed ⌈N_r · metric/target⌉, lambdified with the package's rounding rule."""
    return lambdify_once((N_r, metric, target), proportional_rule_expression())


def proportional_rule(replicas: int, average: float, target_value: float) -> int:
    """⌈N_r · metric/target⌉ for ``replicas`` replicas whose metric averages ``average``.

    >>> proportional_rule(4, 20.0, 10.0)
    8
    """
    return int(_proportional_fn()(replicas, average, target_value))


def _within(ratio: float, tolerance: float) -> bool:
    # inclusive at both ends; the 1e-12 keeps 1.1 inside a 0.1 band despite binary rounding
    return abs(1.0 - ratio) <= tolerance + 1e-12


def replica_count(values, target: float, *, unready: int = 0, tolerance: float = 0.1) -> int:
    """Replicas the HPA recommends for a per-replica metric with an average-value target.

    ``values`` has one entry per ready replica, ``None`` where its metric is missing; there are
    ``unready`` more replicas still starting, so the current count is len(values) + unready.

    ratio = mean(present values)/target. With nothing missing or unready: no change when
    |1 − ratio| ≤ tolerance, else ⌈ratio · n_present⌉. Otherwise Kubernetes recomputes the
    ratio with missing replicas counted at the target on a scale-down and at 0 on a scale-up,
    and unready replicas at 0 on a scale-up (left out on a scale-down); if the new ratio is
    within tolerance or points the other way, the current count stays; else
    ⌈new ratio · counted replicas⌉, unless that moves against the new ratio's direction.
    """
    target = _check.positive("target", target)
    tolerance = _check.non_negative("tolerance", tolerance)
    unready = _check.integer("unready", unready, minimum=0)
    values = list(values)
    present = []
    for i, v in enumerate(values):
        if v is None:
            continue
        v = _check.non_negative(f"values[{i}]", v)
        present.append(v)
    current = len(values) + unready
    missing = len(values) - len(present)
    if not present:
        raise ValueError("values must hold at least one metric (all are None): no recommendation")

    ratio = sum(present) / len(present) / target
    scale_up_with_unready = unready > 0 and ratio > 1.0
    if not scale_up_with_unready and missing == 0:
        if _within(ratio, tolerance):
            return current
        return proportional_rule(len(present), sum(present) / len(present), target)

    counted = list(present)
    if missing:
        counted += [target if ratio < 1.0 else 0.0] * missing
    if scale_up_with_unready:
        counted += [0.0] * unready
    new_ratio = sum(counted) / len(counted) / target
    if _within(new_ratio, tolerance) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current
    proposal = proportional_rule(len(counted), sum(counted) / len(counted), target)
    if (new_ratio < 1.0 and proposal > current) or (new_ratio > 1.0 and proposal < current):
        return current
    return proposal


def external_replica_count(
    current: int, total: float, target_average: float, *, tolerance: float = 0.1
) -> int:
    """Replicas for an external total (a queue length, say) with an average-value target.

    This is how KEDA feeds the HPA: ⌈total / target⌉, unless total/(target · current) is within
    the tolerance of 1, in which case the count stays. From zero replicas any total > 0 scales.
    """
    current = _check.integer("current", current, minimum=0)
    total = _check.non_negative("total", total)
    target_average = _check.positive("target_average", target_average)
    tolerance = _check.non_negative("tolerance", tolerance)
    if current > 0 and _within(total / (target_average * current), tolerance):
        return current
    return _check.ceil_count(total / target_average)


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
    """Hold the recommendation inside the stabilization windows.

    ``history`` is a list of (time_s, recommendation). The result is ``current`` clamped into
    [min(desired, recommendations newer than now − up_window), max(desired, recommendations
    newer than now − down_window)]: it rises only as far as every recent recommendation agrees,
    and falls only to the highest recent one.
    """
    current = _check.integer("current", current, minimum=0)
    desired = _check.integer("desired", desired, minimum=0)
    up_window_s = _check.non_negative("up_window_s", up_window_s)
    down_window_s = _check.non_negative("down_window_s", down_window_s)
    up, down = desired, desired
    for when, rec in history:
        if when > now - up_window_s:
            up = min(up, rec)
        if when > now - down_window_s:
            down = max(down, rec)
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
        _check.positive("period_s", self.period_s)


@dataclass(frozen=True)
class Rules:
    """Scaling rules for one direction: policies, how to combine them, a stabilization window."""

    policies: tuple = ()
    select: str = "Max"
    stabilization_s: float = 0.0

    def __post_init__(self):
        if self.select not in ("Max", "Min", "Disabled"):
            raise ValueError(f"select must be 'Max', 'Min' or 'Disabled', got {self.select!r}")
        _check.non_negative("stabilization_s", self.stabilization_s)
        if self.select != "Disabled" and not self.policies:
            raise ValueError("policies must not be empty unless select is 'Disabled'")

    @staticmethod
    def default_up() -> Rules:
        """Kubernetes' default scale-up: 4 pods or 100 % per 15 s, whichever is more; no window."""
        return Rules((ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)), "Max", 0.0)

    @staticmethod
    def default_down() -> Rules:
        """Kubernetes' default scale-down: 100 % per 15 s, after a 300 s stabilization window."""
        return Rules((ScalingPolicy("Percent", 100, 15),), "Max", 300.0)


def _changes_within(events, now: float, period_s: float) -> tuple[int, int]:
    added = sum(d for t, d in events if t > now - period_s and d > 0)
    removed = -sum(d for t, d in events if t > now - period_s and d < 0)
    return added, removed


def _rate_limit(current: int, events, now: float, rules: Rules, *, up: bool) -> int:
    """The bound the rules put on the next count, in one direction.

    Each policy counts from the replicas at the start of its period (current − added + removed
    within it); "Max" takes the most permissive policy, "Min" the strictest.
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
    """Apply the behavior's rate limits and the min/max bounds to a recommendation.

    ``events`` is a list of (time_s, signed change in replicas). For each policy the count at
    the start of its period is current − added + removed in that period; a Pods policy allows
    start ± value, a Percent policy ⌈start·(1 + v/100)⌉ up or ⌊start·(1 − v/100)⌋ down; "Max"
    takes the most permissive. The up limit is never below current, the down limit never above.
    """
    current = _check.integer("current", current, minimum=0)
    desired = _check.integer("desired", desired, minimum=0)
    min_replicas = _check.integer("min_replicas", min_replicas, minimum=0)
    max_replicas = _check.integer("max_replicas", max_replicas, minimum=1)
    if min_replicas > max_replicas:
        raise ValueError(
            f"min_replicas must be <= max_replicas, got {min_replicas} > {max_replicas}"
        )
    up = up or Rules.default_up()
    down = down or Rules.default_down()
    if desired > current:
        ceiling = min(max(scale_up_limit(current, events, now, up), current), max_replicas)
        return max(min(desired, ceiling), min_replicas)
    if desired < current:
        floor = max(min(scale_down_limit(current, events, now, down), current), min_replicas)
        return min(max(desired, floor), max_replicas)
    return min(max(desired, min_replicas), max_replicas)


# ------------------------------------------------------------------ the HPA controller


@dataclass
class HorizontalAutoscaler:
    """The HPA loop: proportional rule, stabilization, rate limits, every ``sync_s`` seconds.

    ``metric`` is "per-replica" (``step`` gets one value per ready replica) or "external"
    (``step`` gets the total, e.g. a queue length, and the target is per replica).
    """

    target: float
    metric: str = "per-replica"
    tolerance: float = 0.1
    up: Rules = field(default_factory=Rules.default_up)
    down: Rules = field(default_factory=Rules.default_down)
    min_replicas: int = 1
    max_replicas: int = 10_000
    sync_s: float = 15.0
    replicas: int = 1
    history: list = field(default_factory=list)
    events: list = field(default_factory=list)

    def __post_init__(self):
        _check.positive("target", self.target)
        _check.non_negative("tolerance", self.tolerance)
        _check.positive("sync_s", self.sync_s)
        if self.metric not in ("per-replica", "external"):
            raise ValueError(f"metric must be 'per-replica' or 'external', got {self.metric!r}")
        if self.min_replicas > self.max_replicas:
            raise ValueError(
                "min_replicas must be <= max_replicas, "
                f"got {self.min_replicas} > {self.max_replicas}"
            )

    def step(self, now: float, values=None, unready: int = 0, total: float | None = None) -> int:
        """One sync: returns the replicas to run (ready + starting) from now on."""
        if self.metric == "per-replica":
            desired = replica_count(values, self.target, unready=unready, tolerance=self.tolerance)
        else:
            if total is None:
                raise ValueError("total must be given for an external metric")
            desired = external_replica_count(
                self.replicas, total, self.target, tolerance=self.tolerance
            )
        return self.apply(now, desired)

    def apply(self, now: float, desired: int) -> int:
        """Stabilize and rate-limit a raw recommendation (one metric, or the max of several)."""
        if not self.history:
            # as Kubernetes does for a new autoscaler: the current count is the first
            # recommendation, so it does not scale down before a window has passed
            self.history.append((now, self.replicas))
        stable = stabilize(
            self.replicas,
            desired,
            self.history,
            now,
            up_window_s=self.up.stabilization_s,
            down_window_s=self.down.stabilization_s,
        )
        self.history.append((now, desired))
        final = limit_rate(
            self.replicas,
            stable,
            self.events,
            now,
            up=self.up,
            down=self.down,
            min_replicas=self.min_replicas,
            max_replicas=self.max_replicas,
        )
        if final != self.replicas:
            self.events.append((now, final - self.replicas))
        self.replicas = final
        self._forget(now)
        return final

    def _forget(self, now: float) -> None:
        keep = max(self.up.stabilization_s, self.down.stabilization_s)
        self.history = [(t, r) for t, r in self.history if t > now - keep]
        longest = max([p.period_s for p in (*self.up.policies, *self.down.policies)], default=0)
        self.events = [(t, d) for t, d in self.events if t > now - longest]


# ------------------------------------------------------------------ Knative's KPA


@dataclass
class KnativeAutoscaler:
    """Knative's Pod Autoscaler on concurrency: a stable and a panic window.

    Every ``tick_s`` it averages the observed total concurrency over the stable window (60 s)
    and the panic window (6 s) and wants ⌈average / target⌉ replicas from each, both held
    within [⌊ready / max_scale_down_rate⌋, ⌈ready · max_scale_up_rate⌉]. It panics when the
    panic-window demand reaches ``panic_threshold`` (200 %) of the ready replicas; while
    panicking it follows the panic window but never scales down, and it leaves panic after a
    whole stable window without reason to panic.
    """

    target: float
    stable_window_s: float = 60.0
    panic_window_s: float = 6.0
    panic_threshold: float = 2.0
    max_scale_up_rate: float = 1000.0
    max_scale_down_rate: float = 2.0
    tick_s: float = 2.0
    min_replicas: int = 1
    replicas: int = 1
    samples: list = field(default_factory=list)
    panic_since: float | None = None
    panicking: bool = False

    def __post_init__(self):
        _check.positive("target", self.target)
        _check.positive("stable_window_s", self.stable_window_s)
        _check.positive("panic_window_s", self.panic_window_s)
        if self.panic_window_s > self.stable_window_s:
            raise ValueError("panic_window_s must be <= stable_window_s")
        _check.positive("panic_threshold", self.panic_threshold)
        if self.max_scale_up_rate <= 1 or self.max_scale_down_rate <= 1:
            raise ValueError("max_scale_up_rate and max_scale_down_rate must be > 1")

    def step(self, now: float, total_concurrency: float, ready: int) -> int:
        """Record a concurrency sample and return the replicas wanted."""
        _check.non_negative("total_concurrency", total_concurrency)
        ready = max(_check.integer("ready", ready, minimum=0), 1)
        self.samples.append((now, total_concurrency))
        self.samples = [(t, c) for t, c in self.samples if t > now - self.stable_window_s]
        stable = [c for _, c in self.samples]
        panic = [c for t, c in self.samples if t > now - self.panic_window_s]
        lo = _check.floor_count(ready / self.max_scale_down_rate)
        hi = _check.ceil_count(ready * self.max_scale_up_rate)
        want_stable = min(max(_check.ceil_count(sum(stable) / len(stable) / self.target), lo), hi)
        want_panic = min(max(_check.ceil_count(sum(panic) / len(panic) / self.target), lo), hi)
        over = want_panic / ready >= self.panic_threshold
        if over:
            self.panicking, self.panic_since = True, now
        elif self.panicking and now - self.panic_since >= self.stable_window_s:
            self.panicking, self.panic_since = False, None
        if self.panicking:
            wanted = max(want_panic, self.replicas)  # no scale-down while panicking
        else:
            wanted = want_stable
        self.replicas = max(wanted, self.min_replicas)
        return self.replicas

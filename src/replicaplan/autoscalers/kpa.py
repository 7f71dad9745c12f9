"""Knative's Pod Autoscaler (KPA), decision for decision as Knative Serving computes it.

Followed from ``knative/serving``, in our own code: ``pkg/autoscaler/scaling/autoscaler.go``
(``newAutoscaler`` and ``Scale``: the stable and panic windows, the rate bounds, activation
scale, entering, extending and leaving panic, the peak kept while panicking, the scale-down
delay, the excess burst capacity) and, for what the reconciler adds around it,
``pkg/reconciler/autoscaling/kpa/scaler.go`` (min and max scale, scale to zero only after the
grace period) with the defaults of ``config-autoscaler``.

Each tick (2 s) the autoscaler reads the total concurrency averaged over the stable window
(60 s) and over the panic window (10 % of it, 6 s), and wants ⌈average / target⌉ pods from
each, where the target is the per-pod concurrency target times the target utilization:

* both counts are held within [⌊ready / max_scale_down_rate⌋, ⌈ready · max_scale_up_rate⌉]
  (no lower limit, and no min-scale, for a revision that is not ``reachable``);
* it enters panic when the *unclamped* panic count reaches ``panic_threshold`` × ready pods,
  stays while that holds, and leaves only when a whole stable window has passed since it last
  held (strictly more than the window); a new autoscaler over more than one ready pod starts
  in panic;
* in panic it takes the larger of the two counts and never goes below the highest count of
  this panic (forgotten when the panic ends);
* with a scale-down delay it takes the highest count of that delay, for a reachable revision
  only (``if a.deciderSpec.Reachable && a.delayWindow != nil``): one that no route sends
  traffic to any more scales down at once;
* the excess burst capacity ⌊ready · total − target burst capacity − panic concurrency⌋ is an
  output (negative: the activator stays in the request path).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from replicaplan.core import _check


@dataclass
class KnativeAutoscaler:
    """The KPA on concurrency. ``target`` is the per-pod concurrency target (the revision's
    ``autoscaling.knative.dev/target``); the autoscaler aims at ``target · target_utilization``.
    """

    target: float
    target_utilization: float = 0.7
    stable_window_s: float = 60.0
    panic_window_percentage: float = 10.0
    panic_threshold: float = 2.0
    max_scale_up_rate: float = 1000.0
    max_scale_down_rate: float = 2.0
    target_burst_capacity: float = 211.0
    activation_scale: int = 1
    min_scale: int = 0
    reachable: bool = True
    """False for a revision no route sends traffic to: ``Scale`` then sets no scale-down limit
    (``maxScaleDown := 0.`` unless ``spec.Reachable``) and the reconciler ignores min-scale
    (``PodAutoscaler.ScaleBounds``: "min will be ignored if the PA is not reachable")."""
    max_scale: int = 0
    """0: no upper bound."""
    initial_scale: int = 1
    scale_down_delay_s: float = 0.0
    scale_to_zero_grace_s: float = 30.0
    enable_scale_to_zero: bool = True
    tick_s: float = 2.0
    replicas: int = 1
    """Pods ready when the autoscaler is created (it starts in panic above one)."""
    excess_burst_capacity: float = field(default=0.0, init=False)
    samples: list = field(default_factory=list, init=False)
    panic_since: float | None = field(default=None, init=False)
    max_panic_pods: int = field(default=0, init=False)
    recent: list = field(default_factory=list, init=False)
    zero_since: float | None = field(default=None, init=False)
    reached_initial: bool = field(default=False, init=False)
    _new: bool = field(default=True, init=False)

    def __post_init__(self):
        if not isinstance(self.reachable, bool):
            raise ValueError(f"reachable must be True or False, got {self.reachable!r}")
        _check.positive("target", self.target)
        _check.fraction("target_utilization", self.target_utilization)
        _check.positive("stable_window_s", self.stable_window_s)
        if not 1 <= _check.positive("panic_window_percentage", self.panic_window_percentage) <= 100:
            raise ValueError(
                f"panic_window_percentage must lie in [1, 100], got {self.panic_window_percentage}"
            )
        _check.positive("panic_threshold", self.panic_threshold)
        if self.max_scale_up_rate <= 1:
            raise ValueError(f"max_scale_up_rate must be > 1, got {self.max_scale_up_rate}")
        if self.max_scale_down_rate <= 1:
            raise ValueError(f"max_scale_down_rate must be > 1, got {self.max_scale_down_rate}")
        if self.target_burst_capacity != -1:
            _check.non_negative("target_burst_capacity (or -1)", self.target_burst_capacity)
        _check.integer("activation_scale", self.activation_scale, minimum=1)
        _check.integer("min_scale", self.min_scale, minimum=0)
        _check.integer("max_scale", self.max_scale, minimum=0)
        if self.max_scale and self.min_scale > self.max_scale:
            raise ValueError(
                f"min_scale must be <= max_scale, got {self.min_scale} > {self.max_scale}"
            )
        _check.integer("initial_scale", self.initial_scale, minimum=0)
        _check.non_negative("scale_down_delay_s", self.scale_down_delay_s)
        _check.non_negative("scale_to_zero_grace_s", self.scale_to_zero_grace_s)
        _check.positive("tick_s", self.tick_s)
        _check.integer("replicas", self.replicas, minimum=0)

    @property
    def panic_window_s(self) -> float:
        return self.stable_window_s * self.panic_window_percentage / 100

    @property
    def target_value(self) -> float:
        """Concurrency per pod the autoscaler aims at: target × target utilization."""
        return self.target * self.target_utilization

    def pods_for(self, concurrency: float) -> int:
        """⌈concurrency / target_value⌉: the pods a window's average concurrency asks for
        (Knative's desiredStablePodCount and desiredPanicPodCount, before the rate limits)."""
        return _check.ceil_count(concurrency / self.target_value)

    @property
    def panicking(self) -> bool:
        return self.panic_since is not None

    def step(self, now: float, total_concurrency: float, ready: int) -> int:
        """Record a concurrency sample, average it over the two windows, and ``scale``."""
        _check.non_negative("total_concurrency", total_concurrency)
        self.samples.append((now, total_concurrency))
        self.samples = [(t, c) for t, c in self.samples if t > now - self.stable_window_s]
        stable = [c for _, c in self.samples]
        panic = [c for t, c in self.samples if t > now - self.panic_window_s]
        return self.scale(now, sum(stable) / len(stable), sum(panic) / len(panic), ready)

    def scale(self, now: float, observed_stable: float, observed_panic: float, ready: int) -> int:
        """``Scale``: the pods wanted for the concurrency seen over the stable and panic windows."""
        _check.non_negative("observed_stable", observed_stable)
        _check.non_negative("observed_panic", observed_panic)
        ready = _check.integer("ready", ready, minimum=0)
        if self._new:  # newAutoscaler: start in panic over more than one ready pod
            self._new = False
            if self.replicas > 1:
                self.panic_since, self.max_panic_pods = now, self.replicas
        pods = max(1.0, float(ready))
        max_up = _check.ceil_count(self.max_scale_up_rate * pods)
        max_down = _check.floor_count(pods / self.max_scale_down_rate) if self.reachable else 0
        dspc = self.pods_for(observed_stable)
        dppc = self.pods_for(observed_panic)
        want_stable = min(max(dspc, max_down), max_up)
        want_panic = min(max(dppc, max_down), max_up)
        if self.activation_scale > 1:
            if dspc > 0 and want_stable < self.activation_scale:
                want_stable = self.activation_scale
            if dppc > 0 and want_panic < self.activation_scale:
                want_panic = self.activation_scale

        over = dppc / pods >= self.panic_threshold
        if over:
            self.panic_since = now  # enter, or extend, the panic
        elif self.panicking and now - self.panic_since > self.stable_window_s:
            self.panic_since, self.max_panic_pods = None, 0

        wanted = want_stable
        if self.panicking:
            wanted = max(wanted, want_panic)
            self.max_panic_pods = max(self.max_panic_pods, wanted)
            wanted = self.max_panic_pods  # never scale down while panicking

        if self.reachable and self.scale_down_delay_s > 0:  # upstream: a reachable revision only
            self.recent = [(t, n) for t, n in self.recent if t > now - self.scale_down_delay_s]
            self.recent.append((now, wanted))
            wanted = max(n for _, n in self.recent)

        if self.target_burst_capacity == 0:
            self.excess_burst_capacity = 0.0
        elif self.target_burst_capacity > 0:
            total_capacity = ready * self.target
            self.excess_burst_capacity = float(
                math.floor(total_capacity - self.target_burst_capacity - observed_panic)
            )
        else:
            self.excess_burst_capacity = -1.0

        self.replicas = self._bounded(now, wanted, ready)
        return self.replicas

    def _bounded(self, now: float, wanted: int, ready: int) -> int:
        """What the KPA reconciler applies: initial scale, min/max scale, scale to zero."""
        if ready >= self.initial_scale:
            self.reached_initial = True
        if not self.reached_initial:
            wanted = max(wanted, self.initial_scale)
        if self.reachable:
            wanted = max(wanted, self.min_scale)
        if self.max_scale:
            wanted = min(wanted, self.max_scale)
        if wanted == 0:
            if not self.enable_scale_to_zero:
                return 1
            if self.zero_since is None:
                self.zero_since = now
            if now - self.zero_since < self.scale_to_zero_grace_s:
                return min(self.replicas, 1)  # hold one pod (if any) through the grace period
            return 0
        self.zero_since = None
        return wanted

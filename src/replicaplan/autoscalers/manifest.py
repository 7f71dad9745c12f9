"""A Kubernetes HorizontalPodAutoscaler (``autoscaling/v2``) for a concurrency target, and back.

``hpa_manifest`` writes the object an operator applies: a Pods metric (requests in flight per
replica, exported by the serving engine through a metrics adapter) with an ``AverageValue``
target L*, the replica bounds, and a ``behavior`` built from the package's ``hpa.Rules``.
``autoscaler_from_manifest`` reads such an object back into the package's own HPA model
(``hpa.HorizontalAutoscaler``), so that what is applied is what was simulated.

Field names and bounds follow the ``autoscaling/v2`` API (``HorizontalPodAutoscalerSpec``,
``MetricSpec``/``PodsMetricSource``/``MetricTarget``, ``HorizontalPodAutoscalerBehavior``,
``HPAScalingRules``, ``HPAScalingPolicy``): ``periodSeconds`` in 1…1800,
``stabilizationWindowSeconds`` in 0…3600, a policy's ``value`` a positive integer,
``selectPolicy`` one of Max, Min, Disabled, at least one policy per direction, ``minReplicas``
≥ 1 and ≤ ``maxReplicas``. A value
outside them is refused with the field's name, before anything is written.
"""

from __future__ import annotations

from decimal import Decimal

import yaml

from replicaplan.autoscalers import names
from replicaplan.autoscalers.controllers import HPAOn
from replicaplan.autoscalers.hpa import HorizontalAutoscaler, Rules, ScalingPolicy
from replicaplan.core import _check, calendar
from replicaplan.core.calendar import MINUTES_PER_WEEK, minute_of_week


def quantity(value: float) -> str:
    """A Kubernetes quantity for ``value``: whole numbers plain, others in milli-units.

    >>> quantity(51.2), quantity(4), quantity(0.0005)
    ('51200m', '4', '1m')
    """
    value = _check.positive("value", value)
    if float(value).is_integer():
        return str(int(value))
    return f"{max(1, round(value * 1000))}m"


def parse_quantity(text) -> float:
    """The number a Kubernetes quantity stands for ("51200m" → 51.2; "4", "1.5", "2k" too).

    >>> parse_quantity("51200m"), parse_quantity("2k")
    (51.2, 2000.0)
    """
    s = str(text).strip()
    suffixes = {"m": Decimal("0.001"), "k": Decimal(1000), "M": Decimal(10**6), "G": Decimal(10**9)}
    try:
        if s and s[-1] in suffixes:
            return float(Decimal(s[:-1]) * suffixes[s[-1]])
        return float(Decimal(s))
    except ArithmeticError:
        raise ValueError(f"not a Kubernetes quantity: {text!r}") from None


def _whole(name: str, value, minimum: int) -> int:
    """``value`` as an int when it is a whole number (15.0 is 15), else a named error."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return _check.integer(name, value, minimum=minimum)


def _rules_dict(rules: Rules, field: str) -> dict:
    window = _whole(f"{field}.stabilizationWindowSeconds", rules.stabilization_s, 0)
    if window > 3600:
        raise ValueError(f"{field}.stabilizationWindowSeconds must be <= 3600, got {window}")
    policies = []
    for i, p in enumerate(rules.policies):
        period = _whole(f"{field}.policies[{i}].periodSeconds", p.period_s, 1)
        if period > 1800:
            raise ValueError(f"{field}.policies[{i}].periodSeconds must be <= 1800, got {period}")
        value = _whole(f"{field}.policies[{i}].value", p.value, 1)
        policies.append({"type": p.kind, "value": value, "periodSeconds": period})
    if not policies:
        raise ValueError(
            f"{field}.policies: the API requires at least one policy, even with selectPolicy "
            "Disabled"
        )
    return {
        "stabilizationWindowSeconds": window,
        "selectPolicy": rules.select,
        "policies": policies,
    }


def hpa_manifest(
    name: str,
    target: float,
    *,
    min_replicas: int = 1,
    max_replicas: int = 100,
    up: Rules | None = None,
    down: Rules | None = None,
    metric_name: str = "requests_in_flight",
    deployment: str | None = None,
    namespace: str | None = None,
) -> dict:
    """The ``autoscaling/v2`` HorizontalPodAutoscaler holding ``target`` of ``metric_name`` per
    pod (L* requests in flight, or the tokens of KV cache the plan targets when L* is too small
    for an integer count).

    ``up`` and ``down`` default to the API's default rules (``hpa.Rules.default_up`` and
    ``default_down``), written out so that the manifest says what it does.
    """
    names.check_name("name", name)
    if deployment is not None:
        names.check_name("deployment", deployment)
    names.check_metric("metric_name", metric_name)
    if namespace is not None:
        names.check_namespace("namespace", namespace)
    target = _check.positive("target", target)
    min_replicas = _check.integer("min_replicas", min_replicas, minimum=1)
    max_replicas = _check.integer("max_replicas", max_replicas, minimum=1)
    if max_replicas < min_replicas:
        raise ValueError(
            f"max_replicas must be >= min_replicas, got {max_replicas} < {min_replicas}"
        )
    up = up or Rules.default_up()
    down = down or Rules.default_down()
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name} | ({"namespace": namespace} if namespace else {}),
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": deployment or name,
            },
            "minReplicas": min_replicas,
            "maxReplicas": max_replicas,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": metric_name},
                        "target": {
                            "type": "AverageValue",
                            "averageValue": quantity(target),
                        },
                    },
                }
            ],
            "behavior": {
                "scaleUp": _rules_dict(up, "behavior.scaleUp"),
                "scaleDown": _rules_dict(down, "behavior.scaleDown"),
            },
        },
    }


def to_yaml(manifest: dict) -> str:
    """The manifest as YAML, keys in the order written."""
    return yaml.safe_dump(manifest, sort_keys=False)


def _rules_from(d: dict, default: Rules) -> Rules:
    """One direction's rules: each field the manifest sets, the API's default for each it
    leaves out, as Kubernetes fills them (``copyHPAScalingRules`` in
    pkg/apis/autoscaling/v2/defaults.go copies every non-nil field over the defaults; an unset
    scale-down window is the controller's 300 s)."""
    policies = (
        tuple(ScalingPolicy(p["type"], p["value"], p["periodSeconds"]) for p in d["policies"])
        if "policies" in d
        else default.policies
    )
    return Rules(
        policies,
        d.get("selectPolicy", default.select),
        d.get("stabilizationWindowSeconds", default.stabilization_s),
    )


def _behavior_from(behavior: dict) -> tuple[Rules, Rules]:
    """The scale-up and scale-down rules of a ``behavior`` field; the API's defaults for what it
    leaves out."""
    up = _rules_from(behavior.get("scaleUp", {}), Rules.default_up())
    down = _rules_from(behavior.get("scaleDown", {}), Rules.default_down())
    return up, down


def autoscaler_from_manifest(manifest, replicas: int = 1) -> HorizontalAutoscaler:
    """The package's HPA model of an ``autoscaling/v2`` manifest (a dict, or its YAML text).

    Only the shape ``hpa_manifest`` writes is read: one Pods metric with an AverageValue target.
    """
    if isinstance(manifest, str):
        manifest = yaml.safe_load(manifest)
    try:
        if manifest["apiVersion"] != "autoscaling/v2":
            raise ValueError(f"apiVersion must be autoscaling/v2, got {manifest['apiVersion']!r}")
        spec = manifest["spec"]
        (metric,) = spec["metrics"]
        if metric["type"] != "Pods" or metric["pods"]["target"]["type"] != "AverageValue":
            raise ValueError("only a Pods metric with an AverageValue target is read")
        target = parse_quantity(metric["pods"]["target"]["averageValue"])
        behavior = spec.get("behavior", {})
        up, down = _behavior_from(behavior)
        return HorizontalAutoscaler(
            target=target,
            up=up,
            down=down,
            min_replicas=spec.get("minReplicas", 1),
            max_replicas=spec["maxReplicas"],
            replicas=replicas,
        )
    except (KeyError, TypeError) as err:
        raise ValueError(
            f"not an autoscaling/v2 HPA of the expected shape: missing {err}"
        ) from None


def controller_from_manifest(manifest, *, signal: str = "concurrency") -> HPAOn:
    """A closed-loop controller (``control.simulate_fleet``) running the HPA of ``manifest`` on
    the fleet's ``signal`` per replica (a ``Metrics`` field: requests in flight by default, or
    'kv_tokens'), with the manifest's bounds and behavior."""
    hpa = autoscaler_from_manifest(manifest)
    return HPAOn(
        {signal: hpa.target},
        up=hpa.up,
        down=hpa.down,
        min_replicas=hpa.min_replicas,
        max_replicas=hpa.max_replicas,
    )


# ------------------------------------------------------------------ KEDA
def _cron_windows(schedule: list[int], floor: int, lead_min: int) -> list[tuple[int, int, int]]:
    """Runs of clock hours whose scheduled minimum exceeds ``floor``: (first hour, hours,
    replicas), consecutive hours with the same minimum merged (a run may wrap past midnight
    only when the whole day is scheduled, which is then one run of 24 hours)."""
    runs: list[tuple[int, int, int]] = []
    for hour, n in enumerate(schedule):
        if n <= floor:
            continue
        if runs and runs[-1][0] + runs[-1][1] == hour and runs[-1][2] == n:
            first, length, _ = runs[-1]
            runs[-1] = (first, length + 1, n)
        else:
            runs.append((hour, 1, n))
    return runs


def keda_scaled_object(
    name: str,
    target: float,
    *,
    min_replicas: int,
    max_replicas: int,
    up: Rules | None = None,
    down: Rules | None = None,
    metric_name: str = "requests_in_flight",
    prometheus: str = "http://prometheus.monitoring.svc:9090",
    schedule: list[int] | None = None,
    lead_min: int = 0,
    timezone: str = "Etc/UTC",
    deployment: str | None = None,
    namespace: str | None = None,
    fallback_replicas: int | None = None,
    query: str | None = None,
    polling_interval_s: int | None = None,
    cooldown_period_s: int | None = None,
    wake: tuple[str, float] | None = None,
    guard: tuple[str, float] | None = None,
) -> dict:
    """The KEDA ``ScaledObject`` (keda.sh/v1alpha1) equivalent to ``hpa_manifest``.

    A ``prometheus`` trigger reads the fleet's total of the metric, each pod's averaged over the
    last minute, ``sum(avg_over_time(metric_name[1m]))`` (what the planner's replays read), or
    ``query`` when given (the engine's own series: ``engines.keda_query``),
    with an AverageValue threshold L*: the HPA KEDA creates then wants ⌈total/L*⌉ replicas, the
    same as the Pods metric. The bounds and ``behavior`` go to ``minReplicaCount``,
    ``maxReplicaCount`` and ``advanced.horizontalPodAutoscalerConfig.behavior``. With a
    ``schedule`` (minimum replicas for each clock hour, 24 values) a ``cron`` trigger per run
    of hours above ``min_replicas`` asks for that many replicas from ``lead_min`` minutes
    before the run (the start-up) to its end; KEDA takes the largest of its triggers.
    Field names follow the KEDA documentation (concepts/scaling-deployments, scalers/prometheus,
    scalers/cron, keda.sh/docs/2.17); trigger metadata values are strings. The Prometheus
    trigger sets ``ignoreNullValues: "false"``: a query that returns nothing (a broken scrape) is
    an error, not a zero that would leave the fleet at its minimum; with ``fallback_replicas``
    KEDA then runs that many replicas after ``FALLBACK_FAILURES`` failed reads (``fallback``).

    With ``wake`` = (query, per-replica rate) the fleet scales to zero: ``minReplicaCount`` 0,
    and a second Prometheus trigger on ``query``, the requests arriving a second in front of
    the engine (a series that exists with no replica running), with an ``activationThreshold``
    of 0 (KEDA scales from 0 to 1 when the value is above it, ``prometheus_scaler.go``) and the
    per-replica rate as its threshold, so it also sizes the fleet by its arrivals. That trigger
    keeps ``ignoreNullValues: "false"`` (Prometheus down is an error); the engine's own trigger
    takes ``"true"``, since with no replica, and while the first one starts, its series do not
    exist: an error there would send KEDA to the fallback fleet on every wake-up.

    With ``guard`` = (query, limit) a latency guard: a Prometheus trigger ``latency-guard`` of
    metricType Value on ``query`` (the fleet's TTFT quantile, ``engines.ttft_quantile_query``)
    with ``limit`` (the TTFT promise, seconds) as its threshold. For a Value target the HPA
    wants ⌈N_r · value/limit⌉ replicas (``hpa.proportional_rule``), so the guard asks for more
    only when the quantile passes the promise, in proportion, and the HPA takes the largest
    proposal: below the promise the main trigger decides. A window without requests gives NaN,
    which ``ignoreNullValues: "true"`` reads as 0 (``prometheus_scaler.go``): no pressure.
    """
    hpa = hpa_manifest(
        name,
        target,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        up=up,
        down=down,
        metric_name=metric_name,
        deployment=deployment,
        namespace=namespace,
    )
    spec = hpa["spec"]
    names.check_prometheus("prometheus", prometheus)
    calendar.zone(timezone)  # an IANA name KEDA's cron scaler can load, or a ValueError
    if fallback_replicas is not None:
        fallback_replicas = _check.integer("fallback_replicas", fallback_replicas, minimum=1)
    lead_min = _check.integer("lead_min", lead_min, minimum=0)
    if wake is not None:
        wake_query, per_replica = wake
        if not isinstance(wake_query, str) or not wake_query.strip():
            raise ValueError(f"wake query must be a PromQL expression, got {wake_query!r}")
        per_replica = _check.positive("wake rate per replica", per_replica)
    if guard is not None:
        guard_query, limit = guard
        if not isinstance(guard_query, str) or not guard_query.strip():
            raise ValueError(f"guard query must be a PromQL expression, got {guard_query!r}")
        limit = _check.positive("guard limit", limit)
    triggers = [
        {
            "type": "prometheus",
            "metricType": "AverageValue",
            "metadata": {
                "serverAddress": prometheus,
                "query": query or f"sum(avg_over_time({metric_name}[1m]))",
                # a plain decimal (KEDA parses it as a float), equal to the HPA's quantity
                "threshold": repr(
                    parse_quantity(spec["metrics"][0]["pods"]["target"]["averageValue"])
                ),
                # no series is an error, not a zero (KEDA's default treats it as 0); when the
                # fleet scales to zero there are no series at zero, and empty reads as 0
                "ignoreNullValues": "false" if wake is None else "true",
            },
        }
    ]
    if schedule is not None:
        if len(schedule) not in (24, 168):
            raise ValueError(
                "schedule must hold 24 hourly minimums (every day) or 168 (24 per weekday, "
                f"Sunday first), got {len(schedule)}"
            )
        weekly = len(schedule) == 168
        for day in range(7 if weekly else 1):
            hours = list(schedule[24 * day : 24 * day + 24])
            for hour, length, n in _cron_windows(hours, min_replicas, lead_min):
                begin = hour * 60 - lead_min  # may fall on the day before
                start_day = (day - (begin < 0)) % 7
                begin %= 24 * 60
                end_hour, end_day = (hour + length) % 24, (day + (hour + length) // 24) % 7
                if length == 24:  # all day: from midnight to the minute before (start ≠ end)
                    begin, start_day, end_hour, end_day = 0, day, None, day
                start_dow = str(start_day) if weekly else "*"
                end_dow = str(end_day) if weekly else "*"
                end = f"59 23 * * {end_dow}" if end_hour is None else f"0 {end_hour} * * {end_dow}"
                triggers.append(
                    {
                        "type": "cron",
                        "metadata": {
                            "timezone": timezone,
                            "start": f"{begin % 60} {begin // 60} * * {start_dow}",
                            "end": end,
                            "desiredReplicas": str(min(n, max_replicas)),
                        },
                    }
                )
    if wake is not None:
        triggers.append(
            {
                "type": "prometheus",
                "name": "wake",
                "metricType": "AverageValue",
                "metadata": {
                    "serverAddress": prometheus,
                    "query": wake_query,
                    "threshold": repr(round(per_replica, 3)),
                    "activationThreshold": "0",
                    "ignoreNullValues": "false",
                },
            }
        )
    if guard is not None:
        triggers.append(
            {
                "type": "prometheus",
                "name": "latency-guard",
                "metricType": "Value",
                "metadata": {
                    "serverAddress": prometheus,
                    "query": guard_query,
                    "threshold": repr(limit),
                    "ignoreNullValues": "true",
                },
            }
        )
    obj = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": name} | ({"namespace": namespace} if namespace else {}),
        "spec": {
            "scaleTargetRef": {"name": spec["scaleTargetRef"]["name"]},
            "minReplicaCount": 0 if wake is not None else spec["minReplicas"],
            "maxReplicaCount": spec["maxReplicas"],
            "advanced": {"horizontalPodAutoscalerConfig": {"behavior": spec["behavior"]}},
            "triggers": triggers,
        },
    }
    if polling_interval_s is not None:  # how often KEDA reads the trigger (its default: 30 s)
        obj["spec"]["pollingInterval"] = _whole("pollingInterval", polling_interval_s, 1)
    if cooldown_period_s is not None:  # the wait before scaling to zero (its default: 300 s)
        obj["spec"]["cooldownPeriod"] = _whole("cooldownPeriod", cooldown_period_s, 0)
    if fallback_replicas is not None:
        obj["spec"]["fallback"] = {
            "failureThreshold": FALLBACK_FAILURES,
            "replicas": min(fallback_replicas, spec["maxReplicas"]),
        }
    return obj


FALLBACK_FAILURES = 3
"""Failed reads of the Prometheus trigger in a row after which KEDA runs the fallback replicas
(its polling interval is 30 s by default: a minute and a half without a metric)."""


def _cron_minutes(expr: str, field: str) -> list[int]:
    """Minutes of the week (0 = Sunday 00:00) at which a cron expression "M H * * D" fires: D
    a weekday 0–6 (0 = Sunday) or * for every day (the forms the planner writes)."""
    parts = str(expr).split()
    try:
        minute, hour = int(parts[0]), int(parts[1])
        days = range(7) if parts[4] == "*" else [int(parts[4])]
        ok = len(parts) == 5 and parts[2:4] == ["*", "*"] and all(0 <= d < 7 for d in days)
    except (IndexError, ValueError):
        ok = False
    if not ok or not (0 <= minute < 60 and 0 <= hour < 24):
        raise ValueError(
            f"{field} must be a cron expression 'M H * * D' (D a weekday 0-6 or *), got {expr!r}"
        )
    return [1440 * d + 60 * hour + minute for d in days]


def schedule_from_scaled_object(obj) -> list[tuple[int, int, int]]:
    """The cron triggers of a ScaledObject as (start minute, end minute, replicas), minutes of
    the week from Sunday 00:00 in the triggers' time zone (all of them name one); a daily
    trigger gives one window a day. A window's end may come before its start: it wraps past
    the week's end."""
    windows, zones = [], set()
    for i, trigger in enumerate(obj["spec"]["triggers"]):
        if trigger.get("type") != "cron":
            continue
        meta = trigger["metadata"]
        zones.add(meta.get("timezone", "Etc/UTC"))
        if len(zones) > 1:
            raise ValueError(
                f"triggers[{i}].metadata.timezone: the cron triggers name several zones "
                f"({', '.join(sorted(zones))}); one clock is read"
            )
        n = _whole(f"triggers[{i}].desiredReplicas", int(meta["desiredReplicas"]), 1)
        ends = _cron_minutes(meta["end"], f"triggers[{i}].metadata.end")
        for start in _cron_minutes(meta["start"], f"triggers[{i}].metadata.start"):
            # the first end after the start: cron ends the window at its next firing
            end = min(ends, key=lambda e: (e - start) % MINUTES_PER_WEEK)
            windows.append((start, end, n))
    return sorted(windows)


def controller_from_scaled_object(
    obj, *, start_s: float = 0.0, signal: str = "concurrency"
) -> HPAOn:
    """The HPA that KEDA makes of ``obj`` (dict or YAML), as a closed-loop controller: the
    Prometheus trigger's threshold as the per-replica target of requests in flight, the bounds
    and behavior of the object, and its cron triggers as a floor that joins the metric's
    recommendation before the limits, as KEDA's cron metric does. ``start_s`` places the run's
    second 0 on the cron triggers' clock: seconds since the epoch on their zone's wall clock
    (``calendar.wall_clock_s``; plain epoch seconds for Etc/UTC)."""
    if isinstance(obj, str):
        obj = yaml.safe_load(obj)
    try:
        if obj["apiVersion"] != "keda.sh/v1alpha1" or obj["kind"] != "ScaledObject":
            raise ValueError("not a keda.sh/v1alpha1 ScaledObject")
        spec = obj["spec"]
        # the engine's trigger; a "wake" trigger (scale to zero) takes the fleet from 0 to 1,
        # which KEDA does outside its HPA (whose floor stays 1, min_replicas below), and above
        # that asks for arrivals/(ρ*μ*), what the chase asks: the replay reads the engine's
        (prom,) = [
            t for t in spec["triggers"] if t["type"] == "prometheus" and t.get("name") != "wake"
        ]
        target = float(prom["metadata"]["threshold"])
        behavior = spec.get("advanced", {}).get("horizontalPodAutoscalerConfig", {})
        behavior = behavior.get("behavior", {})
        up, down = _behavior_from(behavior)
        low, high = spec.get("minReplicaCount", 0), spec.get("maxReplicaCount", 100)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"not a ScaledObject of the expected shape: {err}") from None
    windows = schedule_from_scaled_object(obj)

    def floor(now: float) -> int:
        minute = minute_of_week(start_s + now)
        active = [
            n for a, b, n in windows if (a <= minute < b if a < b else minute >= a or minute < b)
        ]
        return max(active, default=0)

    # KEDA's trigger is the fleet's sum with an AverageValue threshold: an External metric; the
    # rate's sum is read as one (the others as the per-pod average they equal on a scale-up)
    name = "completion_total" if signal == "completion_rate" else signal
    return HPAOn(
        {name: target},
        floor=floor if windows else None,
        up=up,
        down=down,
        min_replicas=max(1, low),
        max_replicas=high,
    )

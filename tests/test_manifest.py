"""The HPA manifest: the autoscaling/v2 shape, its bounds, and a round trip through the model."""

from pathlib import Path

import jsonschema
import kubernetes_validate
import numpy as np
import pytest
import yaml

from replicaplan.autoscalers import manifest
from replicaplan.autoscalers import manifest as mf
from replicaplan.autoscalers.hpa import HorizontalAutoscaler, Rules, ScalingPolicy


def test_quantities_by_hand():
    assert [mf.quantity(x) for x in (51.2, 4, 0.5, 6.25)] == ["51200m", "4", "500m", "6250m"]
    assert [mf.parse_quantity(q) for q in ("51200m", "4", "1.5", "2k", "500m")] == [
        51.2,
        4.0,
        1.5,
        2000.0,
        0.5,
    ]
    with pytest.raises(ValueError, match="quantity"):
        mf.parse_quantity("lots")


def test_the_manifest_has_the_autoscaling_v2_shape():
    up = Rules((ScalingPolicy("Pods", 8, 60),), "Max", 0)
    down = Rules((ScalingPolicy("Percent", 10, 60),), "Min", 600)
    m = yaml.safe_load(
        mf.to_yaml(mf.hpa_manifest("llm", 51.2, min_replicas=2, max_replicas=40, up=up, down=down))
    )
    assert (m["apiVersion"], m["kind"]) == ("autoscaling/v2", "HorizontalPodAutoscaler")
    spec = m["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "llm"}
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 40)
    (metric,) = spec["metrics"]
    assert metric["type"] == "Pods"
    assert metric["pods"]["target"] == {"type": "AverageValue", "averageValue": "51200m"}
    assert spec["behavior"]["scaleUp"] == {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [{"type": "Pods", "value": 8, "periodSeconds": 60}],
    }
    assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 600


def test_the_model_read_back_decides_as_the_model_written():
    """Re-read from YAML, the autoscaler takes the same decisions on the same metric values."""
    up = Rules((ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)), "Max", 0)
    down = Rules((ScalingPolicy("Percent", 50, 60),), "Max", 300)
    direct = HorizontalAutoscaler(target=51.2, up=up, down=down, min_replicas=1, max_replicas=60)
    text = mf.to_yaml(mf.hpa_manifest("llm", 51.2, max_replicas=60, up=up, down=down))
    read = mf.autoscaler_from_manifest(text)
    rng = np.random.default_rng(0)
    n_direct = n_read = 1
    counts = []
    for k in range(400):  # requests in flight over the fleet climb and fall; pods share them
        in_flight = 50 + 1500 * np.sin(np.pi * k / 400) ** 2
        values = rng.poisson(in_flight / n_direct, size=n_direct).tolist()
        n_direct = direct.step(15.0 * k, values)
        n_read = read.step(15.0 * k, values)
        assert n_read == n_direct
        counts.append(n_direct)
    # the comparison means something: the fleet climbed with the load and came back down
    assert max(counts) >= 4 and counts[-1] < max(counts)
    assert abs(max(counts) - 1550 / 51.2) <= 2  # at the peak the fleet holds L* per pod


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"max_replicas": 1, "min_replicas": 3}, "max_replicas"),
        (
            {"up": Rules((ScalingPolicy("Pods", 4, 2000),), "Max", 0)},
            r"scaleUp.policies\[0\].periodSeconds",
        ),
        (
            {"down": Rules((ScalingPolicy("Percent", 10, 60),), "Max", 4000)},
            "scaleDown.stabilizationWindowSeconds",
        ),
        ({"down": Rules((), "Disabled", 0)}, "at least one policy"),
        ({"up": Rules((ScalingPolicy("Pods", 4, 15.5),), "Max", 0)}, "periodSeconds"),
    ],
)
def test_values_outside_the_api_bounds_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mf.hpa_manifest("llm", 51.2, **kwargs)


def test_bad_target_and_bad_manifest():
    with pytest.raises(ValueError, match="target must be > 0"):
        mf.hpa_manifest("llm", 0)
    with pytest.raises(ValueError, match="autoscaling/v2"):
        mf.autoscaler_from_manifest({"apiVersion": "autoscaling/v1", "spec": {}})
    with pytest.raises(ValueError, match="missing"):
        mf.autoscaler_from_manifest({"apiVersion": "autoscaling/v2", "spec": {}})


K8S = "1.33"  # the Kubernetes version whose OpenAPI schema the manifests are checked against


# KEDA's own CustomResourceDefinition of ScaledObject (v2.20.1, Apache-2.0: see
# tests/data/keda/README.md): its openAPIV3Schema is what the API server checks once KEDA is in
KEDA_CRD = yaml.safe_load(
    (Path(__file__).parent / "data" / "keda" / "keda.sh_scaledobjects.yaml").read_text()
)
(KEDA_VERSION,) = [v for v in KEDA_CRD["spec"]["versions"] if v["name"] == "v1alpha1"]
KEDA_SCHEMA = KEDA_VERSION["schema"]["openAPIV3Schema"]


@pytest.fixture(scope="module")
def two_days():
    """The objects a plan writes, built directly (no plan to compute): L* = 35.2 per pod,
    2 to 20 replicas, the behavior of a 15-minute start-up, and a schedule of busy afternoons."""
    from types import SimpleNamespace

    from replicaplan.autoscalers.hpa import Rules, ScalingPolicy

    up = Rules((ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)), "Max", 0.0)
    down = Rules((ScalingPolicy("Pods", 2, 60),), "Max", 900.0)
    args = dict(min_replicas=2, max_replicas=20, up=up, down=down)
    schedule = [2] * 10 + [6, 8, 9, 9, 8, 6] + [2] * 8
    return SimpleNamespace(
        hpa=manifest.hpa_manifest("llm", 35.2, **args),
        keda=manifest.keda_scaled_object(
            "llm", 35.2, schedule=schedule, lead_min=15, fallback_replicas=12, **args
        ),
    )


def test_the_hpa_passes_the_kubernetes_schema_and_a_broken_one_does_not(two_days):
    assert kubernetes_validate.validate(two_days.hpa, K8S, strict=True)
    broken = yaml.safe_load(manifest.to_yaml(two_days.hpa))
    broken["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] = "480"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S, strict=True)
    broken = yaml.safe_load(manifest.to_yaml(two_days.hpa))
    broken["spec"]["minReplica"] = 3  # a misspelt field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S, strict=True)


def test_the_keda_object_passes_kedas_own_crd_and_broken_copies_do_not(two_days):
    jsonschema.validate(two_days.keda, KEDA_SCHEMA)
    breaks = [
        lambda o: o["spec"].update(minReplicaCount="2"),  # a string where the CRD wants int32
        lambda o: o["spec"]["fallback"].pop("replicas"),  # fallback requires its replicas
        lambda o: o["spec"].pop("scaleTargetRef"),
        lambda o: o["spec"]["triggers"][0].pop("type"),
        lambda o: o["spec"]["fallback"].update(behavior="sometimes"),  # not in its enum
    ]
    for mend in breaks:
        broken = yaml.safe_load(manifest.to_yaml(two_days.keda))
        mend(broken)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, KEDA_SCHEMA)


def test_a_missing_series_is_an_error_and_falls_back_to_the_busiest_fleet(two_days):
    (prom,) = [t for t in two_days.keda["spec"]["triggers"] if t["type"] == "prometheus"]
    assert prom["metadata"]["ignoreNullValues"] == "false"
    assert two_days.keda["spec"]["fallback"] == {"failureThreshold": 3, "replicas": 12}
    capped = manifest.keda_scaled_object(
        "x", 3, min_replicas=1, max_replicas=5, fallback_replicas=9
    )
    assert capped["spec"]["fallback"]["replicas"] == 5  # never beyond maxReplicaCount


def test_the_keda_object_matches_the_hpa(two_days):
    keda, hpa = two_days.keda, two_days.hpa
    spec = keda["spec"]
    behavior = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", **hpa}
    behavior["spec"] = {
        **hpa["spec"],
        "behavior": spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"],
    }
    assert kubernetes_validate.validate(behavior, K8S, strict=True)
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (
        hpa["spec"]["minReplicas"],
        hpa["spec"]["maxReplicas"],
    )
    (prom,) = [t for t in spec["triggers"] if t["type"] == "prometheus"]
    target = manifest.parse_quantity(hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"])
    assert float(prom["metadata"]["threshold"]) == target
    assert prom["metricType"] == "AverageValue"


def test_cron_triggers_by_hand():
    schedule = [2] * 9 + [3] + [5, 5] + [2] * 12
    obj = manifest.keda_scaled_object(
        "llm", 30, min_replicas=2, max_replicas=10, schedule=schedule, lead_min=8
    )
    crons = [t["metadata"] for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    # 09:00–09:59 wants 3, started 8 min early; 10:00–11:59 wants 5
    assert [(c["start"], c["end"], c["desiredReplicas"]) for c in crons] == [
        ("52 8 * * *", "0 10 * * *", "3"),
        ("52 9 * * *", "0 12 * * *", "5"),
    ]
    midnight = manifest.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=3, schedule=[0] * 23 + [4], lead_min=30
    )
    (cron,) = [t["metadata"] for t in midnight["spec"]["triggers"] if t["type"] == "cron"]
    assert (cron["start"], cron["end"], cron["desiredReplicas"]) == (
        "30 22 * * *",  # 23:00 less the 30-minute start-up
        "0 0 * * *",
        "3",
    )
    allday = manifest.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=9, schedule=[4] * 24
    )
    (cron,) = [t["metadata"] for t in allday["spec"]["triggers"] if t["type"] == "cron"]
    assert cron["start"] != cron["end"]  # KEDA refuses equal start and end
    with pytest.raises(ValueError, match="24 hourly minimums"):
        manifest.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=9, schedule=[1] * 23)
    with pytest.raises(ValueError, match="prometheus"):
        manifest.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=9, prometheus="x")
    assert kubernetes_validate  # keep the import used when the schema tests are deselected


def test_a_weekly_schedule_writes_one_trigger_per_weekday_run():
    """168 values: Monday (cron weekday 1) wants 3 from midnight, so its trigger starts on
    Sunday evening, 20 minutes ahead; Saturday's last hour ends at Sunday's midnight, across the
    week's end; the read-back floor sees each at the right minute of the week."""
    week = [1] * 168
    week[24 * 1 + 0] = 3  # Monday 00:00-01:00
    week[24 * 6 + 23] = 5  # Saturday 23:00-24:00
    obj = manifest.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=9, schedule=week, lead_min=20
    )
    crons = [t["metadata"] for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    assert [(c["start"], c["end"], c["desiredReplicas"]) for c in crons] == [
        ("40 23 * * 0", "0 1 * * 1", "3"),
        ("40 22 * * 6", "0 0 * * 0", "5"),
    ]
    jsonschema.validate(obj, KEDA_SCHEMA)
    assert manifest.schedule_from_scaled_object(obj) == [
        (23 * 60 + 40, 1440 + 60, 3),
        (6 * 1440 + 22 * 60 + 40, 0, 5),
    ]
    hpa = manifest.controller_from_scaled_object(obj)  # second 0 = Thursday 1970-01-01 00:00
    monday = (4 * 1440) * 60  # Thursday + 4 days
    assert hpa.floor(monday - 21 * 60) == 0 and hpa.floor(monday - 20 * 60) == 3
    assert hpa.floor(monday + 59 * 60) == 3 and hpa.floor(monday + 60 * 60) == 0
    saturday_late = monday - 2 * 1440 * 60 + 23 * 3600
    assert hpa.floor(saturday_late) == 5 and hpa.floor(saturday_late + 3600) == 0
    with pytest.raises(ValueError, match="24 hourly minimums .* or 168"):
        manifest.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=9, schedule=[1] * 48)


def test_cron_expressions_read_back():
    obj = manifest.keda_scaled_object(
        "llm",
        30,
        min_replicas=1,
        max_replicas=9,
        schedule=[1] * 10 + [4] * 2 + [1] * 12,
        lead_min=20,
    )
    # a daily trigger: one window a day, minutes of the week from Sunday 00:00
    assert manifest.schedule_from_scaled_object(obj) == [
        (1440 * d + 9 * 60 + 40, 1440 * d + 12 * 60, 4) for d in range(7)
    ]
    obj["spec"]["triggers"][1]["metadata"]["start"] = "*/5 9 * * *"
    with pytest.raises(ValueError, match="start must be a cron expression 'M H \\* \\* D'"):
        manifest.schedule_from_scaled_object(obj)
    # a zone is read on the clock the caller places the run on; two zones cannot share one
    obj["spec"]["triggers"][1]["metadata"]["start"] = "40 9 * * *"
    obj["spec"]["triggers"][1]["metadata"]["timezone"] = "Europe/Rome"
    assert len(manifest.schedule_from_scaled_object(obj)) == 7
    second = {**obj["spec"]["triggers"][1], "metadata": {**obj["spec"]["triggers"][1]["metadata"]}}
    second["metadata"]["timezone"] = "Asia/Tokyo"
    obj["spec"]["triggers"].append(second)
    with pytest.raises(ValueError, match="several zones \\(Asia/Tokyo, Europe/Rome\\)"):
        manifest.schedule_from_scaled_object(obj)


def test_a_scaled_object_refuses_a_zone_keda_cannot_load():
    for bad in ("Mars/Olympus", "", " Europe/Rome", "UTC+1"):
        with pytest.raises(ValueError, match="IANA time zone"):
            manifest.keda_scaled_object("llm", 5.0, min_replicas=1, max_replicas=4, timezone=bad)


def test_names_the_api_server_would_refuse():
    for bad in ("", "LLM", "llm_", "-llm", "a" * 254):
        with pytest.raises(ValueError, match="DNS-1123"):
            manifest.hpa_manifest(bad, 30)
    manifest.hpa_manifest("llm-8b.prod", 30)  # dots and dashes inside are fine
    with pytest.raises(ValueError, match="deployment must be"):
        manifest.hpa_manifest("llm", 30, deployment="Serve")
    with pytest.raises(ValueError, match="metric_name"):
        manifest.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=2, metric_name="9x")


def test_a_behavior_field_left_out_takes_the_apis_default():
    """Kubernetes fills each field of scaleUp and scaleDown that a manifest leaves out with its
    default (pkg/apis/autoscaling/v2/defaults.go, copyHPAScalingRules): a scale-down that sets
    only its policies keeps the 300 s window, a scale-up that sets only its window keeps the
    4-pods-or-100 % policies. Read as 0 s, the replay would scale down at the first quiet sync."""
    from replicaplan.autoscalers import manifest as M

    doc = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "x"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "m"},
                        "target": {"type": "AverageValue", "averageValue": "5"},
                    },
                }
            ],
            "behavior": {
                "scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]},
                "scaleUp": {"stabilizationWindowSeconds": 30},
            },
        },
    }
    hpa = M.autoscaler_from_manifest(doc)
    assert hpa.down.stabilization_s == 300
    assert [(p.kind, p.value, p.period_s) for p in hpa.down.policies] == [("Pods", 1, 60)]
    assert hpa.up.stabilization_s == 30
    assert len(hpa.up.policies) == 2 and hpa.up.select == "Max"


# ------------------------------------------------------------------ what the mutation run found
def test_every_quantity_suffix_the_writer_may_meet():
    """Kubernetes' decimal suffixes (resource.Quantity): m = 10⁻³, k = 10³, M = 10⁶, G = 10⁹."""
    assert mf.parse_quantity("2G") == 2e9
    assert mf.parse_quantity("3M") == 3e6
    assert mf.parse_quantity("1.5k") == 1500.0


def test_the_api_bounds_are_inclusive():
    """periodSeconds may be 1800 (the API's largest), and minReplicas may equal maxReplicas."""
    rules = Rules((ScalingPolicy("Pods", 4, 1800),), "Max", 0)
    doc = mf.hpa_manifest("llm", 30, up=rules, min_replicas=3, max_replicas=3)
    assert doc["spec"]["behavior"]["scaleUp"]["policies"][0]["periodSeconds"] == 1800
    assert (doc["spec"]["minReplicas"], doc["spec"]["maxReplicas"]) == (3, 3)
    with pytest.raises(ValueError, match="periodSeconds"):
        mf.hpa_manifest("llm", 30, up=Rules((ScalingPolicy("Pods", 4, 1801),), "Max", 0))


def test_a_scaled_object_is_read_back_whole():
    """Every field the reader takes is the one the writer wrote: the name, the query, the
    bounds, the behavior (a 60-s scale-down window, one pod a minute), the threshold."""
    down = Rules((ScalingPolicy("Pods", 1, 60),), "Max", 60.0)
    obj = mf.keda_scaled_object(
        "llm-a", 12.5, min_replicas=3, max_replicas=7, down=down, query="sum(rate(x[2m]))"
    )
    assert obj["metadata"]["name"] == "llm-a"
    (prom,) = obj["spec"]["triggers"]
    assert prom["metadata"]["query"] == "sum(rate(x[2m]))"
    ctrl = mf.controller_from_scaled_object(yaml.safe_load(mf.to_yaml(obj)))
    assert (ctrl.hpa.min_replicas, ctrl.hpa.max_replicas) == (3, 7)
    assert ctrl.hpa.down == down
    assert ctrl.hpa.target == 12.5
    # without the prometheus metric name the default query reads the default metric
    plain = mf.keda_scaled_object("llm", 12.5, min_replicas=1, max_replicas=4)
    assert plain["spec"]["triggers"][0]["metadata"]["query"] == (
        "sum(avg_over_time(requests_in_flight[1m]))"
    )
    # KEDA's own defaults where the object leaves the bounds out: 0 (held at 1 here) and 100
    del plain["spec"]["minReplicaCount"], plain["spec"]["maxReplicaCount"]
    ctrl = mf.controller_from_scaled_object(plain)
    assert (ctrl.hpa.min_replicas, ctrl.hpa.max_replicas) == (1, 100)


def test_a_weekly_run_at_midnight_and_a_sunday_lead_keep_their_weekdays():
    """A Monday run from 00:00 with no lead starts on Monday (weekday 1), not Sunday; a Sunday
    run from 00:00 with 30 minutes of lead starts on Saturday (6) at 23:30, not weekday 7."""
    week = [1] * 168
    week[24 * 1] = 4  # Monday 00:00-01:00
    obj = mf.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=9, schedule=week)
    (cron,) = [t["metadata"] for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    assert (cron["start"], cron["end"]) == ("0 0 * * 1", "0 1 * * 1")
    week = [1] * 168
    week[0] = 4  # Sunday 00:00-01:00
    obj = mf.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=9, schedule=week, lead_min=30
    )
    (cron,) = [t["metadata"] for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    assert (cron["start"], cron["end"]) == ("30 23 * * 6", "0 1 * * 0")


@pytest.mark.parametrize(
    "expr",
    ["60 9 * * *", "0 24 * * *", "0 9 * * 7", "0 9 1 * *", "0 9 * 1 *", "0 9 * *", "x 9 * * *"],
)
def test_a_cron_expression_outside_the_planners_forms_is_refused(expr):
    obj = mf.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=9, schedule=[1] * 9 + [4] + [1] * 14
    )
    obj["spec"]["triggers"][1]["metadata"]["start"] = expr
    with pytest.raises(ValueError, match="start must be a cron expression"):
        mf.schedule_from_scaled_object(obj)


def test_a_cron_trigger_without_a_time_zone_is_utc_and_one_replica_is_a_count():
    obj = mf.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=9, schedule=[1] * 9 + [2] + [1] * 14
    )
    meta = obj["spec"]["triggers"][1]["metadata"]
    del meta["timezone"]
    meta["desiredReplicas"] = "1"  # as an operator may write it
    assert mf.schedule_from_scaled_object(obj)[0][2] == 1
    meta["timezone"] = "UTC"
    assert len(mf.schedule_from_scaled_object(obj)) == 7


def test_a_window_that_wraps_the_week_is_active_at_its_first_minute():
    """A Saturday 23:00 → Sunday 01:00 window: active at Saturday 23:00 (its first minute) and
    at Sunday 00:30, not at Sunday 01:00."""
    week = [1] * 168
    week[24 * 6 + 23] = 5
    week[0] = 5
    obj = mf.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=9, schedule=week)
    hpa = mf.controller_from_scaled_object(obj)  # second 0 = Thursday 00:00
    saturday_23 = (2 * 1440 + 23 * 60) * 60
    assert hpa.floor(saturday_23 - 60) == 0
    assert hpa.floor(saturday_23) == 5
    assert hpa.floor(saturday_23 + 90 * 60) == 5
    assert hpa.floor(saturday_23 + 120 * 60) == 0


def test_every_object_says_its_namespace():
    """``kubectl apply -f`` puts an object without metadata.namespace in the current context's
    namespace, which may not be the Deployment's: the objects carry it."""
    hpa = mf.hpa_manifest("llm", 30, namespace="serving")
    keda = mf.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=4, namespace="serving")
    assert hpa["metadata"] == keda["metadata"] == {"name": "llm", "namespace": "serving"}
    kubernetes_validate.validate(hpa, K8S, strict=True)
    jsonschema.validate(keda, KEDA_SCHEMA)
    with pytest.raises(ValueError, match="namespace must be a DNS-1123 label"):
        mf.hpa_manifest("llm", 30, namespace="Serving")


def test_kedas_polling_and_cooldown_are_written_when_given():
    obj = mf.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=4, polling_interval_s=15, cooldown_period_s=600
    )
    assert (obj["spec"]["pollingInterval"], obj["spec"]["cooldownPeriod"]) == (15, 600)
    jsonschema.validate(obj, KEDA_SCHEMA)
    plain = mf.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=4)
    assert "pollingInterval" not in plain["spec"] and "cooldownPeriod" not in plain["spec"]
    with pytest.raises(ValueError, match="pollingInterval"):
        mf.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=4, polling_interval_s=0)


def test_a_fleet_that_scales_to_zero_wakes_on_a_query_in_front_of_the_engine():
    """KEDA scales from 0 when any trigger is above its activationThreshold
    (prometheus_scaler.go: val > ActivationThreshold); the engine's series do not exist at
    zero, so the wake trigger reads the requests in front of it, and the engine's trigger
    takes empty as 0 (an error there would send KEDA to the fallback on every wake-up, while
    the first replica starts). The object passes KEDA's CRD."""
    wake = 'sum(rate(nginx_ingress_controller_requests{ingress="llm"}[1m]))'
    obj = mf.keda_scaled_object(
        "llm", 7.25, min_replicas=1, max_replicas=4, fallback_replicas=3, wake=(wake, 7.2461)
    )
    jsonschema.validate(obj, KEDA_SCHEMA)
    spec = obj["spec"]
    assert spec["minReplicaCount"] == 0 and spec["maxReplicaCount"] == 4
    engine, woken = spec["triggers"]
    assert engine["metadata"]["ignoreNullValues"] == "true"
    assert woken["name"] == "wake" and woken["metadata"]["query"] == wake
    assert woken["metadata"]["activationThreshold"] == "0"
    assert woken["metadata"]["ignoreNullValues"] == "false"
    assert float(woken["metadata"]["threshold"]) == 7.246
    # the replay reads the engine's trigger, with the HPA's floor of 1
    ctl = mf.controller_from_scaled_object(obj)
    assert ctl is not None
    plain = mf.keda_scaled_object("llm", 7.25, min_replicas=1, max_replicas=4)
    assert plain["spec"]["minReplicaCount"] == 1 and len(plain["spec"]["triggers"]) == 1
    with pytest.raises(ValueError, match="wake query"):
        mf.keda_scaled_object("llm", 7.25, min_replicas=1, max_replicas=4, wake=(" ", 7.0))


@pytest.mark.slow
def test_scale_to_zero_from_the_command_line(capsys, tmp_path):
    """--min-replicas 0 writes KEDA's object with a wake trigger; without --wake-query, with
    --manifest (an HPA cannot scale to zero), or a wake query without --min-replicas 0, the
    command stops before any work, naming the flags."""
    from replicaplan.interface.cli import main

    log = str(Path(__file__).parents[1] / "data/azure-llm-inference-2023/conv_sample.csv")
    wake = "sum(rate(gateway_requests_total[1m]))"
    base = ["plan", "--log", log]
    for extra, words in (
        (["--min-replicas", "0"], "--min-replicas 0 needs --wake-query"),
        (
            ["--min-replicas", "0", "--wake-query", wake, "--manifest", str(tmp_path / "h")],
            "--manifest: an HPA cannot scale to zero",
        ),
        (["--wake-query", wake], "--wake-query wakes a fleet that scales to zero"),
    ):
        assert main([*base, *extra]) == 2
        assert words in capsys.readouterr().err
        assert not list(tmp_path.iterdir())
    keda = tmp_path / "keda.yaml"
    assert main([*base, "--min-replicas", "0", "--wake-query", wake, "--keda", str(keda)]) == 0
    obj = yaml.safe_load(keda.read_text())
    jsonschema.validate(obj, KEDA_SCHEMA)
    assert obj["spec"]["minReplicaCount"] == 0
    assert obj["spec"]["triggers"][-1]["metadata"]["query"] == wake


# ---------------------------------------------------------------- the API's bounds, at their edges
# HorizontalPodAutoscalerBehavior's validation (pkg/apis/autoscaling/validation): a window of
# 0 to 3,600 s, a policy's period of 1 to 1,800 s and a value above 0; minReplicas at least 1
# (0 only behind the alpha HPAScaleToZero gate) and 1 when left out.


def _rules(window=0, period=15, value=1):
    return Rules((ScalingPolicy("Pods", value, period),), "Max", window)


@pytest.mark.parametrize(
    "up, ok",
    [
        (_rules(window=0), True),
        (_rules(window=3600), True),
        (_rules(window=3601), False),
        (_rules(period=1), True),
        (_rules(period=1800), True),
        (_rules(period=1801), False),
        (_rules(value=1), True),
    ],
)
def test_behavior_bounds_are_the_apis(up, ok):
    if ok:
        obj = mf.hpa_manifest("llm", 5, up=up)
        kubernetes_validate.validate(obj, K8S, strict=True)
    else:
        with pytest.raises(ValueError, match=r"must be <= (3600|1800)"):
            mf.hpa_manifest("llm", 5, up=up)


def test_replica_bounds_and_keda_counts_at_their_least():
    assert mf.hpa_manifest("llm", 5, min_replicas=1, max_replicas=1)["spec"]["minReplicas"] == 1
    for kwargs in ({"min_replicas": 0}, {"max_replicas": 0}):
        (name,) = kwargs
        with pytest.raises(ValueError, match=f"^{name} must be an integer >= 1"):
            mf.hpa_manifest("llm", 5, **kwargs)
    least = mf.keda_scaled_object(
        "llm", 5, min_replicas=1, max_replicas=2, fallback_replicas=1, lead_min=0,
        cooldown_period_s=0,
    )  # fmt: skip
    assert least["spec"]["fallback"]["replicas"] == 1 and least["spec"]["cooldownPeriod"] == 0
    jsonschema.validate(least, KEDA_SCHEMA)
    for kwargs, name in (
        ({"fallback_replicas": 0}, "fallback_replicas"),
        ({"lead_min": -1}, "lead_min"),
        ({"cooldown_period_s": -1}, "cooldownPeriod"),
    ):
        with pytest.raises(ValueError, match=name):
            mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=2, **kwargs)


def test_an_hpa_without_min_replicas_reads_as_the_apis_default_of_one():
    obj = mf.hpa_manifest("llm", 5, min_replicas=3, max_replicas=6)
    del obj["spec"]["minReplicas"]
    assert mf.autoscaler_from_manifest(obj).min_replicas == 1


def test_the_yaml_keeps_the_order_the_objects_are_written_in():
    """kubectl and a reader expect scaleTargetRef first; sorted keys would put behavior first."""
    text = mf.to_yaml(mf.hpa_manifest("llm", 5))
    assert text.index("scaleTargetRef") < text.index("minReplicas") < text.index("behavior")


def _cron(obj):
    return [
        (t["metadata"]["start"], t["metadata"]["end"], t["metadata"]["desiredReplicas"])
        for t in obj["spec"]["triggers"]
        if t["type"] == "cron"
    ]


def test_weekly_cron_windows_by_hand():
    """168 hourly minimums from Sunday (cron's 0): 4 at Monday 13:00, 3 at Sunday 00:00 and at
    Saturday 13:00, 1 elsewhere, floor 1. With an 8-minute lead the Sunday window starts on
    Saturday at 23:52; without a lead, on Sunday at 00:00."""
    table = [1] * 168
    table[24 * 1 + 13] = 4
    table[24 * 0 + 0] = 3
    table[24 * 6 + 13] = 3
    led = mf.keda_scaled_object(
        "llm", 5, min_replicas=1, max_replicas=9, schedule=table, lead_min=8
    )
    assert _cron(led) == [
        ("52 23 * * 6", "0 1 * * 0", "3"),
        ("52 12 * * 1", "0 14 * * 1", "4"),
        ("52 12 * * 6", "0 14 * * 6", "3"),
    ]
    plain = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=table)
    assert _cron(plain)[0] == ("0 0 * * 0", "0 1 * * 0", "3")
    jsonschema.validate(led, KEDA_SCHEMA)


def test_a_whole_day_scheduled_is_one_window_from_midnight():
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=[3] * 24)
    assert _cron(obj) == [("0 0 * * *", "59 23 * * *", "3")]


@pytest.mark.parametrize(
    "start, ok",
    [
        ("0 13 * * 0", True),
        ("0 13 * * 6", True),
        ("0 13 * * 7", False),
        ("0 13 * * -1", False),
        ("59 23 * * *", True),
        ("60 13 * * *", False),
        ("0 24 * * *", False),
        ("0 0 * * *", True),
    ],
)
def test_cron_expressions_read_back_within_the_week(start, ok):
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=[2] + [1] * 23)
    (trigger,) = [t for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    trigger["metadata"]["start"] = start
    if ok:
        assert mf.schedule_from_scaled_object(obj)
    else:
        with pytest.raises(ValueError, match="cron expression"):
            mf.schedule_from_scaled_object(obj)


def test_an_object_of_another_api_version_or_kind_is_refused():
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=2)
    for field, value in (("apiVersion", "keda.sh/v1beta1"), ("kind", "ScaledJob")):
        wrong = {**obj, field: value}
        with pytest.raises(ValueError, match="expected shape"):
            mf.controller_from_scaled_object(wrong)


def test_runs_of_hours_merge_and_windows_cross_midnight_by_hand():
    """Daily: 3 at 01:00 and 4 from 05:00 to 07:59 (a second run of three hours, one trigger).
    Weekly: 4 at Monday 23:00 and 3 at Tuesday 00:00 (two windows, each on its own day); 3 at
    Saturday 23:00 ends at Sunday 00:00 (cron's 0); with a one-minute lead, Sunday 00:00 starts
    on Saturday at 23:59."""
    daily = [1] * 24
    daily[1], daily[5], daily[6], daily[7] = 3, 4, 4, 4
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=daily)
    assert _cron(obj) == [("0 1 * * *", "0 2 * * *", "3"), ("0 5 * * *", "0 8 * * *", "4")]
    weekly = [1] * 168
    weekly[24 * 1 + 23], weekly[24 * 2 + 0], weekly[24 * 6 + 23] = 4, 3, 3
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=weekly)
    assert _cron(obj) == [
        ("0 23 * * 1", "0 0 * * 2", "4"),
        ("0 0 * * 2", "0 1 * * 2", "3"),
        ("0 23 * * 6", "0 0 * * 0", "3"),
    ]
    sunday = [1] * 168
    sunday[0] = 3
    obj = mf.keda_scaled_object(
        "llm", 5, min_replicas=1, max_replicas=9, schedule=sunday, lead_min=1
    )
    assert _cron(obj) == [("59 23 * * 6", "0 1 * * 0", "3")]


def test_with_a_schedule_and_scale_to_zero_only_the_engines_trigger_reads_empty_as_zero():
    obj = mf.keda_scaled_object(
        "llm", 5, min_replicas=1, max_replicas=9, schedule=[3] + [1] * 23, wake=("sum(x)", 5.0)
    )
    engine, *others = obj["spec"]["triggers"]
    assert engine["type"] == "prometheus" and engine["metadata"]["ignoreNullValues"] == "true"
    assert [t["metadata"].get("ignoreNullValues") for t in others] == [None, "false"]


@pytest.mark.parametrize(
    "field, value, ok",
    [
        ("start", "-1 13 * * *", False),
        ("desiredReplicas", "1", True),
        ("desiredReplicas", "0", False),
    ],
)
def test_cron_triggers_read_back_refuse_what_keda_would(field, value, ok):
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=[2] + [1] * 23)
    (trigger,) = [t for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    trigger["metadata"][field] = value
    if ok:
        assert mf.schedule_from_scaled_object(obj)
    else:
        with pytest.raises(ValueError):
            mf.schedule_from_scaled_object(obj)


def test_a_cron_window_ends_at_its_end_minute():
    """A window of 13:00-14:00 every day (cron's end fires at 14:00): the floor holds at 13:59
    and is gone at 14:00, as KEDA's cron scaler is active only between start and end."""
    table = [1] * 24
    table[13] = 4
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=table)
    ctl = mf.controller_from_scaled_object(obj)
    assert ctl.floor(14 * 3600 - 60) == 4 and ctl.floor(14 * 3600) == 0
    assert ctl.floor(14 * 3600 - 1) == 4  # the last second of 13:59, second 0 being 00:00
    assert ctl.floor(13 * 3600) == 4 and ctl.floor(13 * 3600 - 60) == 0


def test_an_hpa_written_without_a_maximum_allows_a_hundred():
    """hpa_manifest's default maxReplicas (the API requires one): 100, as its signature says."""
    assert mf.hpa_manifest("llm", 5)["spec"]["maxReplicas"] == 100


def test_keda_objects_read_back_with_kedas_defaults_and_the_signal_named():
    """Without minReplicaCount and maxReplicaCount KEDA uses 0 and 100 (its ScaledObject
    specification); the replay's HPA keeps a floor of 1. The rate signal is read as the fleet's
    total of completions, the others by their own name."""
    obj = mf.keda_scaled_object("llm", 5, min_replicas=2, max_replicas=9, polling_interval_s=1)
    assert obj["spec"]["pollingInterval"] == 1
    del obj["spec"]["minReplicaCount"], obj["spec"]["maxReplicaCount"]
    ctl = mf.controller_from_scaled_object(obj, signal="concurrency")
    assert (ctl.hpa.min_replicas, ctl.hpa.max_replicas) == (1, 100)
    assert set(ctl.targets) == {"concurrency"}
    rate = mf.controller_from_scaled_object(obj, signal="completion_rate")
    assert set(rate.targets) == {"completion_total"}


def test_an_hpa_of_another_target_type_is_refused_when_read():
    obj = mf.hpa_manifest("llm", 5)
    obj["spec"]["metrics"][0]["pods"]["target"] = {"type": "Value", "value": "5"}
    with pytest.raises(ValueError, match="AverageValue"):
        mf.autoscaler_from_manifest(obj)


def test_a_cron_hour_below_zero_is_refused():
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=[2] + [1] * 23)
    (trigger,) = [t for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    trigger["metadata"]["start"] = "0 -1 * * *"
    with pytest.raises(ValueError, match="cron expression"):
        mf.schedule_from_scaled_object(obj)


def test_a_window_ending_at_23_00_ends_on_its_own_day():
    """Monday 22:00-23:00: the end is 23:00 on Monday, not on Tuesday (hour + length = 23 is
    still the same day)."""
    table = [1] * 168
    table[24 * 1 + 22] = 4
    obj = mf.keda_scaled_object("llm", 5, min_replicas=1, max_replicas=9, schedule=table)
    assert _cron(obj) == [("0 22 * * 1", "0 23 * * 1", "4")]


# ---------------------------------------------------------------- the latency guard
def test_the_latency_guard_asks_for_more_only_while_the_ttft_quantile_passes_the_promise(
    capsys, tmp_path
):
    """--latency-guard adds a Value trigger on the fleet's p90 TTFT (the quota's quantile of
    vLLM's histogram, over this Deployment's pods) with --ttft-slo as its threshold. Fed to the
    HPA's own arithmetic for a Value target (getUsageRatioReplicaCount, ``hpa.desired_replicas``)
    with 4 replicas: p90 at 2.5 s against 1 s asks for ⌈4 · 2.5⌉ = 10; at 0.6 s it asks for
    ⌈4 · 0.6⌉ = 3, fewer than the main trigger's 4, so the largest proposal is the main one's;
    within the 10 % tolerance it keeps 4. The object passes KEDA's CRD and the query parses."""
    import promql_parser

    from replicaplan.autoscalers.hpa import MetricSpec, desired_replicas
    from replicaplan.interface.cli import main

    log = str(Path(__file__).parents[1] / "data/azure-llm-inference-2023/conv_sample.csv")
    keda = tmp_path / "keda.yaml"
    args = ["plan", "--log", log, "--keda", str(keda), "--latency-guard", "--ttft-slo", "1.0"]
    assert main([*args, "--namespace", "serving", "--served-model", "m"]) == 0
    obj = yaml.safe_load(keda.read_text())
    jsonschema.validate(obj, KEDA_SCHEMA)
    (guard,) = [t for t in obj["spec"]["triggers"] if t.get("name") == "latency-guard"]
    assert guard["metricType"] == "Value"
    assert float(guard["metadata"]["threshold"]) == 1.0
    assert guard["metadata"]["ignoreNullValues"] == "true"
    query = guard["metadata"]["query"]
    tree = promql_parser.parse(query)
    assert tree.func.name == "histogram_quantile"
    assert tree.args[0].val == 0.9
    assert 'vllm:time_to_first_token_seconds_bucket{namespace="serving",model_name="m"' in query
    assert 'pod=~"llm-[a-z0-9]+-[a-z0-9]+"' in query and "sum by (le)" in query
    spec = MetricSpec("External", "Value", float(guard["metadata"]["threshold"]))
    assert desired_replicas(spec, 4, value=2.5) == 10
    assert desired_replicas(spec, 4, value=0.6) == 3
    assert desired_replicas(spec, 4, value=1.05) == 4
    assert desired_replicas(spec, 4, value=0.0) == 0  # NaN read as 0: the main trigger decides
    # without the flag there is no guard
    assert main(["plan", "--log", log, "--keda", str(keda)]) == 0
    plain = yaml.safe_load(keda.read_text())
    assert all(t.get("name") != "latency-guard" for t in plain["spec"]["triggers"])


def test_a_guard_without_a_query_or_with_a_limit_of_zero_is_refused():
    with pytest.raises(ValueError, match="guard query"):
        manifest.keda_scaled_object("llm", 7.0, min_replicas=1, max_replicas=4, guard=("", 1.0))
    with pytest.raises(ValueError, match="guard limit must be > 0"):
        manifest.keda_scaled_object("llm", 7.0, min_replicas=1, max_replicas=4, guard=("up", 0))

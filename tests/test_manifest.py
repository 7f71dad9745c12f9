"""The HPA manifest: the autoscaling/v2 shape, its bounds, and a round trip through the model."""

import numpy as np
import pytest
import yaml

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
    with pytest.raises(ValueError, match="concurrency_target"):
        mf.hpa_manifest("llm", 0)
    with pytest.raises(ValueError, match="autoscaling/v2"):
        mf.autoscaler_from_manifest({"apiVersion": "autoscaling/v1", "spec": {}})
    with pytest.raises(ValueError, match="missing"):
        mf.autoscaler_from_manifest({"apiVersion": "autoscaling/v2", "spec": {}})

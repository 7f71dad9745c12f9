"""The manifests' behavior from the start-up time and the log's steps (planner/behavior.py)."""

import math
from pathlib import Path

import numpy as np
import pytest

from replicaplan.planner import plan

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "azure-llm-inference-2023"
PRICE = {"price_per_replica_hour": 2.0, "tokens_per_request": 200.0}


ROOT = Path(__file__).resolve().parents[1]


SAMPLE_LOG = ROOT / "data/azure-llm-inference-2023/conv_sample.csv"


WEEK = ROOT / "data/synthetic-week/rates.csv"


K8S = "1.33"  # the Kubernetes version whose OpenAPI schema the manifests are checked against


HAND_WRITTEN_HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llm}
  minReplicas: 2
  maxReplicas: 9
  metrics:
  - type: Pods
    pods:
      metric: {name: requests_in_flight}
      target: {type: AverageValue, averageValue: "12500m"}
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      policies: [{type: Pods, value: 3, periodSeconds: 60}]
    scaleDown:
      stabilizationWindowSeconds: 240
      policies: [{type: Percent, value: 50, periodSeconds: 60}]
"""


SCHEDULE_WINS_STARTUP_MIN = 18


FULL_CODE = (
    Path(__file__).resolve().parents[2]
    / "shared/data/azure-llm-inference-2023/AzureLLMInferenceTrace_code.csv"
)


@pytest.mark.parametrize("startup, window_s", [(3, 300), (12, 720)])
def test_behavior_from_the_start_up_and_the_logs_steps(startup, window_s):
    rate = np.r_[np.full(30, 2.0), np.full(30, 30.0), np.full(30, 2.0)]
    up, down = plan.behavior(rate, 8.0, 0.8, startup)
    k = math.ceil(28 / 6.4)  # 5 replicas for the rise and for the fall
    assert [(p.kind, p.value, p.period_s) for p in up.policies] == [
        ("Pods", k, 15),
        ("Percent", 100, 15),
    ]
    assert up.stabilization_s == 0
    assert [(p.kind, p.value, p.period_s) for p in down.policies] == [("Pods", k, 60)]
    assert down.stabilization_s == window_s  # max(5 min, T_start)
    calm = np.full(30, 2.0)
    up, down = plan.behavior(calm, 8.0, 0.8, 3)
    assert up.policies[0].value == 4 and down.policies[0].value == 1  # the floors

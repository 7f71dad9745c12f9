"""The issue's checks on the Azure code trace (the vendored hour at six times its rate, about
the full trace's): the HPA on the plan's signal, requests completed a second, pays at most 1.25
times the chase's replica-hours and leaves requests waiting no longer than the HPA this planner
wrote before (requests in flight, bounded at the busiest minute's fleet)."""

from pathlib import Path

import pytest

from replicaplan.core.sizing import ReplicaRate
from replicaplan.planner import signals as S
from replicaplan.planner.calibration import measured_replica
from replicaplan.planner.operating import operating_point
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.control import per_second
from replicaplan.traffic import logs

DATA = Path(__file__).resolve().parents[1] / "data" / "azure-llm-inference-2023"


pytestmark = pytest.mark.slow  # the discrete replica measured on both traces


@pytest.mark.parametrize("kind", ["code", "conv"])
@pytest.mark.parametrize(
    "model",
    [ReplicaModel.from_hardware("llama-3-8b", "a100-80gb"), ReplicaModel()],
    ids=["Llama-3-8B/A100", "running example"],
)
def test_the_completion_rate_on_the_azure_traces(kind, model):
    log = logs.read_trace(DATA / f"{kind}_sample.csv")
    point = operating_point(log, model, n_requests=2000)
    replica = measured_replica(model, log.length_mix(), point, n_requests=2000)
    case = S.Case(
        kind,
        per_second(log.rate_per_minute()) * 6,
        replica,
        ReplicaRate(point.mu_star, point.target_utilization),
        point.concurrency_target,
        8 * 60,
    )
    chase = S.chase(case)
    rate = S.measure(case, "completion rate")
    before = S.measure(case, "running + waiting", bound=case.busiest_fleet)
    assert rate.replica_hours <= 1.25 * chase.replica_hours
    assert rate.waiting_s <= before.waiting_s
    assert rate.peak <= case.busiest_fleet

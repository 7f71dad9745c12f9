"""The replica the planner's replays run on (planner.calibration): the discrete replica's
steady states, and a fleet of them that holds what the discrete replica holds."""

from pathlib import Path

import numpy as np
import pytest

from replicaplan.autoscalers.controllers import Fixed
from replicaplan.planner.calibration import measured_replica
from replicaplan.planner.operating import operating_point
from replicaplan.serving.engine import simulate_open
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.control import simulate_fleet
from replicaplan.traffic import loadgen as lg
from replicaplan.traffic import logs

DATA = Path(__file__).resolve().parents[1] / "data" / "azure-llm-inference-2023"
REPLICAS = {
    "running example": ReplicaModel(),
    "Llama-3-8B on an A100": ReplicaModel.from_hardware("llama-3-8b", "a100-80gb"),
}


@pytest.fixture(scope="module", params=["conv_sample.csv", "code_sample.csv"])
def log(request):
    return logs.read_trace(DATA / request.param)


@pytest.mark.slow
@pytest.mark.parametrize("replica", REPLICAS)
def test_a_fleet_of_measured_replicas_holds_what_the_discrete_replica_holds(log, replica):
    model = REPLICAS[replica]
    point = operating_point(log, model, n_requests=4000)
    # runs of 16,000 requests a rate: the measurement's own sampling noise stays under 2 %
    measured = measured_replica(model, log.length_mix(), point, n_requests=8000)
    rng = np.random.default_rng(42)  # other draws than the measurement's
    for share in (0.4, 0.7):  # between the measured points (0.35, 0.45, 0.65, 0.75 of mu*)
        rate = share * point.mu_star
        prompt, output = log.length_mix().sample(20_000, rng)
        discrete = simulate_open(model, lg.poisson_arrivals(rate, 20_000, rng), prompt, output)
        steady = discrete.window(2000)
        w_discrete = float(np.mean(steady.end - steady.arrival))
        # three replicas on three times the rate, for half an hour, fed as the replays feed a
        # log (each second at its rate: the measured states hold the arrivals' randomness)
        fleet = simulate_fleet(
            np.full(1800, 3 * rate), Fixed(3), replica=measured, initial=3, poisson=False
        )
        w_fleet = fleet.mean_residence_s
        per_replica = float(fleet.in_flight.mean() / 3)
        assert w_fleet == pytest.approx(w_discrete, rel=0.05), (replica, share)
        assert per_replica == pytest.approx(rate * w_discrete, rel=0.05), (replica, share)

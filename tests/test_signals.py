"""The scaling signals measured side by side (planner.signals): on the book's day, the HPA on
requests in flight runs away during the 21:00 step while replicas load their weights; on the
arrival rate it follows the chase."""

import numpy as np
import pytest

from replicaplan.autoscalers.controllers import HPAOn, Metrics
from replicaplan.core.example import EXAMPLE as E
from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import STARTUP
from replicaplan.planner import signals as S
from replicaplan.scenarios.synthetic import reference_traffic
from replicaplan.serving.fluid import FluidReplica
from replicaplan.simulation.control import per_second, simulate_fleet

pytestmark = pytest.mark.slow  # a minute-long simulation fixture

STEP = (20 * 3600 + 55 * 60, 21 * 3600 + 40 * 60)


@pytest.fixture(scope="module")
def day():
    return S.Case(
        "the day",
        per_second(reference_traffic()),
        FluidReplica(),
        ReplicaRate(E.mu_star_rps, E.target_utilization),
        E.concurrency_target,
        STARTUP.seconds,
        window=STEP,
    )


@pytest.fixture(scope="module")
def rows(day):
    return {r.signal: r for r in S.table([day])}


def test_the_backlog_signal_runs_to_its_bound_and_the_arrival_rate_does_not(day, rows):
    bound = 2 * day.busiest_fleet
    chase = rows["the chase (exact traffic)"]
    in_flight = rows["running + waiting"]
    arrivals = rows["arrival rate"]
    # requests in flight count the queue that builds while replicas load: the step's 7
    # replicas become the bound's 20, and the day costs more than twice the chase
    assert in_flight.peak == bound and in_flight.need == 7
    assert in_flight.replica_hours > 2 * chase.replica_hours
    # the arrival rate leaves the queue out: the step's peak is its need, the day the chase's
    assert arrivals.peak <= 1.5 * arrivals.need
    assert arrivals.replica_hours <= 1.25 * chase.replica_hours
    assert arrivals.waiting_s <= 1.1 * chase.waiting_s
    # KEDA's sum of the same counter (an External metric) asks the same
    keda = rows["KEDA: arrivals (sum)"]
    assert keda.replica_hours == pytest.approx(arrivals.replica_hours, rel=0.05)


def test_the_arrival_rate_waits_less_than_todays_bounded_hpa(day, rows):
    today = S.measure(day, "running + waiting", bound=day.busiest_fleet)
    assert rows["arrival rate"].waiting_s < today.waiting_s
    assert rows["arrival rate"].replica_hours < today.replica_hours


def test_the_arrival_signal_is_the_counters_rate_per_ready_replica():
    """The loop's arrival rate is the arrivals of the last minute over 60 s, per ready pod: on
    a constant 6 req/s without Poisson noise the HPA reads exactly 6/N."""
    seen = []

    class Probe(HPAOn):
        def decide(self, m: Metrics) -> int:
            seen.append((m.now, m.arrival_rate, m.arrival_total, m.ready))
            return m.ready

    simulate_fleet(
        np.full(300, 6.0),
        Probe({"arrival_rate": 1.0}),
        startup_s=0,
        initial=3,
        poisson=False,
        metric_window_s=60,
    )
    late = [(r, total, n) for t, r, total, n in seen if t >= 60]
    assert late and all(
        total == pytest.approx(6.0) and r == pytest.approx(2.0) for r, total, n in late
    )


def test_bad_signal_is_named(day):
    with pytest.raises(ValueError, match="signal must be one of"):
        S.measure(day, "gpu")

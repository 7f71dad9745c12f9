"""``core.sizing``: ρ*, the fleet's bounds and the short budget, checked when they are made,
and only then.

The ranges come from their definitions (ρ* a share of μ*, in (0, 1]; a budget a share of
requests, below 1) and from the API the bounds go to: KEDA's ScaledObject CRD (vendored in
tests/data/keda) declares minReplicaCount and maxReplicaCount int32, with minimums 0 and 1.
"""

import math
from pathlib import Path

import pytest
import yaml

from replicaplan.core.promises import Promises
from replicaplan.core.sizing import (
    REPLICA_RATE,
    REPLICAS_MAX,
    SIZING,
    ReplicaRate,
    Sizing,
    default_short_budget,
)

CRD = Path(__file__).parent / "data" / "keda" / "keda.sh_scaledobjects.yaml"


def _crd_spec() -> dict:
    crd = yaml.safe_load(CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]


def test_the_bounds_are_the_apis():
    spec = _crd_spec()
    for field, name, low in (
        ("minReplicaCount", "min_replicas", 0),
        ("maxReplicaCount", "max_replicas", 1),
    ):
        declared = spec[field]
        assert declared["format"] == "int32" and declared["minimum"] == low
        assert getattr(Sizing(**{name: low}), name) == low
        with pytest.raises(ValueError, match=f"{name} must be an integer >= {low}"):
            Sizing(**{name: low - 1})
    assert REPLICAS_MAX == 2**31 - 1  # the largest int32
    assert Sizing(max_replicas=REPLICAS_MAX).max_replicas == REPLICAS_MAX
    with pytest.raises(ValueError, match="max_replicas must be at most 2,147,483,647"):
        Sizing(max_replicas=2**31)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"target_utilization": 0.0}, "target_utilization"),
        ({"target_utilization": 1.2}, "target_utilization"),
        ({"target_utilization": math.nan}, "target_utilization"),
        ({"short_budget": 1.0}, "short_budget"),
        ({"short_budget": -0.01}, "short_budget"),
        ({"min_replicas": 2.5}, "min_replicas"),
        ({"min_replicas": 3, "max_replicas": 2}, r"max_replicas must be >= min_replicas \(3\)"),
    ],
)
def test_a_bad_sizing_is_refused_by_its_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Sizing(**kwargs)


def test_the_edges_of_each_range_are_taken():
    edge = Sizing(target_utilization=1.0, short_budget=0.0, min_replicas=0, max_replicas=1)
    assert (edge.target_utilization, edge.short_budget) == (1.0, 0.0)
    assert Sizing(min_replicas=4, max_replicas=4).max_replicas == 4


def test_the_default_budget_is_a_tenth_of_the_quotas_margin():
    """(1 − q)/10: 1 % of requests for the book's 90 % quota, 0.1 % for 99 %."""
    assert SIZING.budget(Promises(quota=0.9)) == pytest.approx(0.01)
    assert SIZING.budget(Promises(quota=0.99)) == pytest.approx(0.001)
    assert default_short_budget(0.8) == pytest.approx(0.02)
    assert Sizing(short_budget=0.05).budget(Promises(quota=0.9)) == 0.05  # given: kept


def test_a_sizing_is_frozen_so_a_checked_one_stays_checked():
    with pytest.raises(AttributeError):
        SIZING.target_utilization = 2.0  # type: ignore[misc]


def test_a_plan_checks_each_input_once_where_it_is_made(checks_made):
    """The operating point, the replays, the reserves, the schedule, the recommendation and
    the manifests' bounds trust the objects they are given: a whole plan checks ρ* and the short
    budget once each, in ``Sizing``; μ* once, in ``Sizing.at``; the day once; the price of a
    replica-hour and the tokens of an answer once, in ``Pricing`` (they were checked again for
    every policy priced)."""
    from replicaplan.planner import plan
    from replicaplan.traffic import logs

    sizing = Sizing(target_utilization=0.8, short_budget=0.02, min_replicas=1, max_replicas=40)
    week = Path(__file__).resolve().parents[1] / "data" / "synthetic-week" / "rates.csv"
    rate = logs.read_rate_series(week)[: 24 * 60]
    got = plan.plan(rate, sizing=sizing, n_requests=600, precision=None)
    assert (got.point.target_utilization, got.short_budget) == (0.8, 0.02)
    assert (got.min_replicas, got.max_replicas) == (1, 40)
    assert checks_made["fraction"].count("target_utilization") == 1
    assert checks_made["fraction"].count("short_budget") == 1
    # μ* once, where the measured value meets the sizing (``Sizing.at``); ρ* never again as the
    # replays', the reserves', the schedule's and the manifests' ``target``
    assert checks_made["positive"].count("mu_star_rps") == 1
    assert "target" not in checks_made["fraction"]
    # the day once where it enters; the HPA's replay runs on a per-second series made from it
    assert checks_made["rates"] == ["traffic", "rate"]
    assert got.replica_rate == ReplicaRate(got.point.mu_star, 0.8)
    assert checks_made["positive"].count("price_per_replica_hour") == 1
    assert checks_made["positive"].count("tokens_per_request") == 1


@pytest.mark.parametrize(
    "mu_star, rho, name",
    [
        (0.0, 0.8, "mu_star_rps must be > 0"),
        (-8.0, 0.8, "mu_star_rps must be > 0"),
        (math.nan, 0.8, "mu_star_rps must be finite"),
        (math.inf, 0.8, "mu_star_rps must be finite"),
        ("8", 0.8, "mu_star_rps must be a real number"),
        (8.0, 0.0, r"target_utilization must lie in \(0, 1\]"),
        (8.0, 1.01, r"target_utilization must lie in \(0, 1\]"),
        (8.0, math.nan, "target_utilization must be finite"),
        (8.0, True, "target_utilization must be a real number"),
    ],
)
def test_a_bad_replica_rate_is_refused_by_its_name(mu_star, rho, name):
    with pytest.raises(ValueError, match=name):
        ReplicaRate(mu_star, rho)


def test_a_replica_rate_sizes_on_rho_star_mu_star():
    """ρ*μ* by hand: 0.8 × 8 = 6.4 req/s a replica; 60 req/s need ⌈9.375⌉ = 10 of them, and
    ⌈7.5⌉ = 8 on the whole of μ* (ρ* = 1, the default)."""
    from replicaplan.serving.fluid import replicas_needed

    assert REPLICA_RATE == ReplicaRate(8.0, 0.8)
    assert REPLICA_RATE.rps == pytest.approx(6.4, rel=1e-15)
    assert replicas_needed(60.0, REPLICA_RATE) == 10
    assert replicas_needed(60.0, ReplicaRate(8.0)) == 8
    assert replicas_needed(56.0, Sizing(0.7).at(8.0)) == 10  # 5.6 a replica: a whole 10


def test_sizing_at_checks_mu_star_and_trusts_its_own_rho_star(checks_made):
    sizing = Sizing(0.7)
    made = sizing.at(8.0)
    assert (made.mu_star_rps, made.target_utilization) == (8.0, 0.7)
    assert checks_made["fraction"] == ["target_utilization"]  # Sizing's, not again in at()
    assert checks_made["positive"] == ["mu_star_rps"]
    with pytest.raises(ValueError, match="mu_star_rps must be > 0"):
        sizing.at(0.0)


@pytest.mark.parametrize(
    "call",
    [
        "replicas_needed(60.0, 8.0)",
        "step_reserve(8.0, 8.0)",
        "ramp_reserve(0.01, STARTUP, 8.0)",
        "simulate_day(reference_traffic(), 8.0)",
    ],
)
def test_two_numbers_where_a_replica_rate_belongs_say_what_to_give(call):
    """The functions that took μ* and ρ* as two numbers take one ``ReplicaRate``: a number in
    its place is refused by a message that names it, not by an AttributeError deep inside."""
    from replicaplan.core.startup import STARTUP
    from replicaplan.planner.reserve import ramp_reserve, step_reserve
    from replicaplan.scenarios.synthetic import reference_traffic
    from replicaplan.serving.fluid import replicas_needed
    from replicaplan.simulation.day import simulate_day

    names = dict(
        STARTUP=STARTUP,
        ramp_reserve=ramp_reserve,
        step_reserve=step_reserve,
        reference_traffic=reference_traffic,
        replicas_needed=replicas_needed,
        simulate_day=simulate_day,
    )
    with pytest.raises(TypeError, match=r"replica_rate must be a ReplicaRate\(mu_star_rps"):
        eval(call, names)


def test_a_replica_rate_is_frozen():
    with pytest.raises(AttributeError):
        REPLICA_RATE.mu_star_rps = 0.0  # type: ignore[misc]

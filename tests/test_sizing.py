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
from replicaplan.core.sizing import REPLICAS_MAX, SIZING, Sizing, default_short_budget

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


def test_a_plan_checks_its_sizing_once_where_it_is_made(checks_made):
    """The operating point, the replays' recommendation and the manifests' bounds trust the
    sizing they are given: a whole plan checks ρ* and the short budget once each, in
    ``Sizing``, and not again in ``operating_point`` or ``recommend``."""
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

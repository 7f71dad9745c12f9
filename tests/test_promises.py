"""``core.promises``: the promises are checked when they are made, and only then.

The values come from the facts sheet (τ_TTFT 1 s, τ_TPOT 50 ms, q = 0.9); the ranges from the
definition (a time limit is positive, a quota lies strictly between 0 and 1: a quota of 1
would need every request of an open-loop run served in time, which no finite rate achieves).
"""

import math

import numpy as np
import pytest

from replicaplan.core.promises import PROMISES, Promises
from replicaplan.planner import operating
from replicaplan.serving.trace import Trace
from replicaplan.traffic.loadgen import AZURE_CONVERSATION


def test_the_running_examples_promises_are_the_sources():
    assert (PROMISES.ttft_slo_s, PROMISES.tpot_slo_s, PROMISES.quota) == (1.0, 0.05, 0.9)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"ttft_slo_s": 0}, "ttft_slo_s must be > 0"),
        ({"ttft_slo_s": math.inf}, "ttft_slo_s must be finite"),
        ({"tpot_slo_s": -0.05}, "tpot_slo_s must be > 0"),
        ({"tpot_slo_s": math.nan}, "tpot_slo_s must be finite"),
        ({"quota": 1.0}, r"quota must lie in \(0, 1\)"),
        ({"quota": 0.0}, r"quota must lie in \(0, 1\)"),
        ({"quota": "0.9"}, "quota"),
    ],
)
def test_a_bad_promise_is_refused_by_its_name_and_range(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Promises(**kwargs)


def test_promises_are_frozen_so_a_checked_one_stays_checked():
    with pytest.raises(AttributeError):
        PROMISES.quota = 1.0  # type: ignore[misc]


def test_a_request_meets_the_promises_only_within_both_limits():
    """TTFT 0.4/1.2 s and TPOT 0.03/0.07 s (first token at 0.4 or 1.2, 11 tokens): only the
    request within both limits counts, and a rejected request never does."""
    arrival = np.zeros(4)
    first = np.array([0.4, 1.2, 0.4, 0.4])
    end = first + 10 * np.array([0.03, 0.03, 0.07, 0.03])
    trace = Trace(arrival, first, end, np.full(4, 100), np.full(4, 11))
    assert trace.meets(PROMISES).tolist() == [True, False, False, True]
    rejected = Trace(
        arrival, first, end, np.full(4, 100), np.full(4, 11), rejected=np.array([0, 0, 0, 1], bool)
    )
    assert rejected.meets(PROMISES).tolist() == [True, False, False, False]


def test_the_operating_point_checks_its_promises_once_where_they_are_made(checks_made):
    """The sweep, its replications and the search within it trust the promises they are given:
    a whole operating point on the conversation mix checks τ_TTFT exactly once, in
    ``Promises``."""
    promises = Promises(ttft_slo_s=1.0, tpot_slo_s=0.05, quota=0.9)
    point = operating.operating_point(
        AZURE_CONVERSATION, promises=promises, n_requests=600, precision=None
    )
    assert point.mu_star > 0
    assert checks_made["positive"].count("ttft_slo_s") == 1
    assert checks_made["positive"].count("tpot_slo_s") == 1

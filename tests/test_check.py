"""Input checks and the one rounding rule for replica counts (core._check)."""

import math

import numpy as np
import pytest

from replicaplan.core import _check


def test_ceil_count_rounds_up_but_forgives_float_noise():
    # 42/6.4 = 6.5625 asks for 7; 6.4 * 5 / 6.4 computed in floating point must stay 5
    assert _check.ceil_count(42 / 6.4) == 7
    assert _check.ceil_count(0.1 * 3 / 0.3) == 1
    assert _check.ceil_count(5.000000000001) == 5
    assert _check.ceil_count(5.01) == 6
    assert list(_check.ceil_count(np.array([0.0, 1.5, 2.0]))) == [0, 2, 2]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: _check.positive("capacity", 0), "capacity"),
        (lambda: _check.positive("capacity", math.nan), "capacity"),
        (lambda: _check.fraction("target", 1.5), "target"),
        (lambda: _check.integer("reserve", 1.5, minimum=0), "reserve"),
        (lambda: _check.integer("reserve", -1, minimum=0), "reserve"),
        (lambda: _check.rates("rate", [1.0, -2.0]), "rate"),
        (lambda: _check.rates("rate", [1.0, math.inf]), "rate"),
    ],
)
def test_bad_values_are_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()

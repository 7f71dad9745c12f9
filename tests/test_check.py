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


def test_a_checked_day_is_a_read_only_copy_given_back_unchecked():
    """``rates`` copies what it checks and remembers the copy: the caller's array may change
    afterwards and the checked one does not; given back, the copy is returned as it is, with
    no second pass over it; a view or a sum of it is another array, checked again."""
    mine = np.array([1.0, 2.0, 3.0])
    day = _check.rates("rate", mine)
    mine[0] = -5.0  # the caller's own array, changed after the check
    assert day[0] == 1.0 and not day.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        day[0] = -5.0
    assert _check.checked_rates(day) and not _check.checked_rates(mine)
    assert _check.rates("rate", day) is day
    assert not _check.checked_rates(day[1:]) and not _check.checked_rates(day - 2.0)
    with pytest.raises(ValueError, match="element 0 is -1.0"):
        _check.rates("rate", day - 2.0)


def test_a_day_made_writable_again_is_checked_again():
    day = _check.rates("rate", [1.0, 2.0])
    day.flags.writeable = True  # it owns its memory, so this is allowed
    day[1] = math.nan
    with pytest.raises(ValueError, match="element 1 is nan"):
        _check.rates("rate", day)


def test_an_array_at_a_remembered_address_is_not_taken_for_the_one_that_was_there():
    """The memory is by ``id`` with a weak reference: once a checked day is gone, an array
    that happens to get its address is checked as any other."""
    import gc

    key = id(_check.rates("rate", [1.0]))
    gc.collect()
    assert key not in _check._CHECKED_RATES
    for _ in range(200):  # some array soon reuses the address
        bad = np.array([-1.0])
        bad.flags.writeable = False
        if id(bad) == key:
            break
    with pytest.raises(ValueError, match="element 0 is -1.0"):
        _check.rates("rate", bad)

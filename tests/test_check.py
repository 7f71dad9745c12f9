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


def test_the_noise_forgiven_is_below_the_ninth_digit():
    """Counts are rounded to 9 decimals first: 3e-10 above a whole number is noise, 3e-9 is
    a real excess (and the same below, for the floor), as numbers and as arrays."""
    for whole in (2.0, 1_000.0):
        assert _check.ceil_count(whole + 3e-10) == whole
        assert _check.ceil_count(whole + 3e-9) == whole + 1
        assert _check.floor_count(whole - 3e-10) == whole
        assert _check.floor_count(whole - 3e-9) == whole - 1
        above = np.array([whole + 3e-10, whole + 3e-9])
        below = np.array([whole - 3e-10, whole - 3e-9])
        assert list(_check.ceil_count(above)) == [whole, whole + 1]
        assert list(_check.floor_count(below)) == [whole, whole - 1]


def test_the_edges_each_check_takes():
    """What each range lets in at its edge: an integer from 0 by default, a rate of 0 or just
    under 1, a series of one minute."""
    assert _check.integer("n", 0) == 0
    with pytest.raises(ValueError, match="n must be an integer >= 0, got -1"):
        _check.integer("n", -1)
    assert list(_check.rates("rate", [0.0, 0.5])) == [0.0, 0.5]
    assert list(_check.rates("rate", [7.0])) == [7.0]
    with pytest.raises(ValueError, match=r"got shape \(0,\)"):
        _check.rates("rate", [])
    with pytest.raises(ValueError, match=r"got shape \(1, 1\)"):
        _check.rates("rate", [[1.0]])


def test_a_bad_series_names_its_first_bad_minute():
    with pytest.raises(ValueError, match="element 1 is -1.0"):
        _check.rates("rate", [1.0, -1.0, -2.0, 3.0])


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


@pytest.mark.parametrize(
    "check, value, taken",
    [
        (lambda v: _check.positive("x", v), 0.5, True),
        (lambda v: _check.positive("x", v), 0.0, False),
        (lambda v: _check.positive("x", v), -0.5, False),
        (lambda v: _check.non_negative("x", v), 0.0, True),
        (lambda v: _check.non_negative("x", v), 0.5, True),
        (lambda v: _check.non_negative("x", v), -0.5, False),
        # the default (0, 1]: a utilization or a target
        (lambda v: _check.fraction("x", v), 1.0, True),
        (lambda v: _check.fraction("x", v), 0.5, True),
        (lambda v: _check.fraction("x", v), 0.0, False),
        (lambda v: _check.fraction("x", v), -0.5, False),
        (lambda v: _check.fraction("x", v), 1.0 + 1e-12, False),
        # [0, 1): a budget
        (lambda v: _check.fraction("x", v, low_open=False, high_open=True), 0.0, True),
        (lambda v: _check.fraction("x", v, low_open=False, high_open=True), 0.999, True),
        (lambda v: _check.fraction("x", v, low_open=False, high_open=True), 1.0, False),
        (lambda v: _check.fraction("x", v, low_open=False, high_open=True), -0.5, False),
        (lambda v: _check.integer("x", v, minimum=3), 3, True),
        (lambda v: _check.integer("x", v, minimum=3), 2, False),
        (lambda v: _check.integer("x", v), 0, True),
        (lambda v: _check.integer("x", v), -1, False),
        (lambda v: _check.integer("x", v), True, False),
        (lambda v: _check.positive("x", v), True, False),
        (lambda v: _check.positive("x", v), "1", False),
    ],
)
def test_each_range_at_its_edges(check, value, taken):
    if taken:
        assert check(value) == value
    else:
        with pytest.raises(ValueError, match="^x must "):
            check(value)


def test_a_ranges_options_are_named_at_the_call():
    """``minimum``, ``low_open`` and ``high_open`` are keyword-only: ``integer("n", v, 1)``
    or ``fraction("q", v, False)`` would read as a value, not as the range it sets."""
    with pytest.raises(TypeError):
        _check.integer("n", 3, 3)
    with pytest.raises(TypeError):
        _check.fraction("q", 0.5, False, True)


def test_an_instance_check_names_the_fields_to_make_one_of():
    import dataclasses

    @dataclasses.dataclass
    class Pair:
        left: float
        right: float

    pair = Pair(1.0, 2.0)
    assert _check.instance("pair", pair, Pair) is pair
    with pytest.raises(TypeError, match=r"^pair must be a Pair\(left, right\), got 1.0$"):
        _check.instance("pair", 1.0, Pair)

"""Input checks shared by every module, and the one rounding rule for replica counts.

Each check raises ``ValueError`` naming the parameter and the range it must lie in, so a
caller never gets a wrong number from bad input.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import weakref

import numpy as np


def positive(name: str, value) -> float:
    """Return ``value`` as a float after checking it is finite and > 0."""
    x = _finite(name, value)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return x


def non_negative(name: str, value) -> float:
    """Return ``value`` as a float after checking it is finite and >= 0."""
    x = _finite(name, value)
    if x < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return x


def fraction(name: str, value, *, low_open: bool = True, high_open: bool = False) -> float:
    """Return ``value`` after checking it lies in the unit interval with the given openness.

    The defaults check ``(0, 1]``, the range of a utilization or a target.
    """
    x = _finite(name, value)
    lo_ok = x > 0 if low_open else x >= 0
    hi_ok = x < 1 if high_open else x <= 1
    if not (lo_ok and hi_ok):
        interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return x


def integer(name: str, value, *, minimum: int = 0) -> int:
    """Return ``value`` as an int after checking it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def instance(name: str, value, kind: type):
    """Return ``value`` after checking it is a ``kind``: a checked parameter object
    (``ReplicaRate``, ``Pricing``) where loose numbers were once given; the TypeError names the
    fields to make one of."""
    if not isinstance(value, kind):
        made_of = ", ".join(f.name for f in dataclasses.fields(kind))
        raise TypeError(f"{name} must be a {kind.__name__}({made_of}), got {value!r}")
    return value


def rates(name: str, values) -> np.ndarray:
    """Return ``values`` as a 1-d float array of finite, non-negative numbers (not empty).

    The array returned is a read-only copy that this function remembers: given it back (a
    plan hands the same day to its replays, reserves, schedule and controllers), it returns it
    at once, checked once. A view or any array computed from it is checked again.
    """
    if checked_rates(values):
        return values
    arr = np.array(values, dtype=float)  # a copy: the caller's array may change, this one not
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence of rates, got shape {arr.shape}")
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must hold finite rates >= 0; element {i} is {float(arr[i])!r}")
    arr.flags.writeable = False
    key = id(arr)
    _CHECKED_RATES[key] = weakref.ref(arr, lambda _, key=key: _CHECKED_RATES.pop(key, None))
    return arr


_CHECKED_RATES: dict[int, weakref.ref] = {}
"""The arrays ``rates`` returned and that still exist, by ``id``."""


def checked_rates(values) -> bool:
    """Is ``values`` an array ``rates`` returned, still read-only (so still as it was checked)?"""
    if type(values) is not np.ndarray or values.flags.writeable:
        return False
    ref = _CHECKED_RATES.get(id(values))
    return ref is not None and ref() is values


def ceil_count(x):
    """⌈x⌉ for a count of replicas, ignoring binary rounding noise; ``x`` may be an array.

    A product such as 0.3 · 8 / 6.4 can land a hair above a whole number and would otherwise
    round up to one replica too many. This is the package's one rule for rounding a count up.
    """
    if np.ndim(x):
        return np.ceil(np.round(np.asarray(x, dtype=float), 9)).astype(int)
    return math.ceil(round(float(x), 9))


def floor_count(x):
    """⌊x⌋ for a count of replicas, ignoring binary rounding noise (see ``ceil_count``)."""
    if np.ndim(x):
        return np.floor(np.round(np.asarray(x, dtype=float), 9)).astype(int)
    return math.floor(round(float(x), 9))


def _finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x

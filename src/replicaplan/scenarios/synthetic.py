"""Synthetic traffic: the book's reference day, and days that stray from it.

The reference day (the source's): a quiet night at 12 req/s, an afternoon hump that peaks at
60 req/s at 14:00, and an event at 21:00 that adds 30 req/s at once for 20 minutes. The hump
is a squared, clipped parabola rather than an exponential, so the series is built from sums
and products only and is the same bit for bit on every processor: the policy table depends on
where ⌈λ/(ρ*μ*)⌉ changes value, and those boundaries must not move with the machine.

Layer: scenarios (the book's traffic, which no planner default may use). Imports core only.
"""

from __future__ import annotations

import numpy as np

from replicaplan.core import _check, portable
from replicaplan.core.calendar import EPOCH_WEEKDAY, MINUTES_PER_DAY
from replicaplan.core.example import EXAMPLE


def reference_traffic(
    *,
    night_rps: float = EXAMPLE.min_rps,
    peak_rps: float = EXAMPLE.peak_rps,
    event_rps: float = EXAMPLE.event_rps,
    event_start_min: int = 21 * 60,
    event_minutes: int = EXAMPLE.event_minutes,
) -> np.ndarray:
    """The source's day: 1440 per-minute arrival rates in requests/s.

    λ(m) = night + (peak − night) · max(0, 1 − x²)², x = (m − 840)/300, plus ``event_rps`` for
    ``event_minutes`` minutes from ``event_start_min``. The hump is 600 minutes wide (09:00–19:00).
    """
    minute = np.arange(MINUTES_PER_DAY)
    x = (minute - 14 * 60) / 300
    hump = np.clip(1 - x**2, 0, None) ** 2
    rate = night_rps + (peak_rps - night_rps) * hump
    during_event = (minute >= event_start_min) & (minute < event_start_min + event_minutes)
    return rate + event_rps * during_event


def noisy_days(days: int, *, noise: float, seed: int = 0, **traffic) -> np.ndarray:
    """``days`` days of traffic like the reference day without its event, each day different.

    Every day the afternoon hump's height is scaled by 1 + noise · N(0, 1), its peak moved by
    noise · 60 min · N(0, 1), and every minute multiplied by exp(noise · N(0, 1)/2), so ``noise``
    sets how far one day strays from the season. Returns an array of shape (days, 1440).
    """
    days = _check.integer("days", days, minimum=1)
    noise = _check.non_negative("noise", noise)
    rng = np.random.default_rng(seed)
    night = traffic.get("night_rps", EXAMPLE.min_rps)
    peak = traffic.get("peak_rps", EXAMPLE.peak_rps)
    minute = np.arange(MINUTES_PER_DAY)
    out = np.empty((days, MINUTES_PER_DAY))
    for d in range(days):
        height = max(0.0, 1 + noise * rng.standard_normal())
        shift = noise * 60 * rng.standard_normal()
        x = (minute - 14 * 60 - shift) / 300
        hump = np.clip(1 - x**2, 0, None) ** 2
        jitter = portable.exp(noise * rng.standard_normal(MINUTES_PER_DAY) / 2)
        out[d] = (night + (peak - night) * height * hump) * jitter
    return out


def working_weeks(
    days: int,
    *,
    noise: float,
    weekend: float = 0.5,
    bursts: int = 2,
    burst_rps: float = EXAMPLE.event_rps,
    burst_minutes: int = EXAMPLE.event_minutes,
    seed: int = 0,
) -> np.ndarray:
    """``days`` days like ``noisy_days`` (the same draws for the same ``seed``), minute 0 at
    1970-01-01 00:00 UTC (a Thursday, as a rate series is read), with two things a real
    service's weeks have: Saturday's and Sunday's hump at ``weekend`` of its height, and
    ``bursts`` one-off bursts of ``burst_rps`` for ``burst_minutes`` on random days between
    08:00 and 22:00 (the reference day's event, at a time nobody could foresee). Returns a
    flat array of ``days`` × 1440 per-minute rates."""
    weekend = _check.fraction("weekend", weekend, low_open=False)
    bursts = _check.integer("bursts", bursts, minimum=0)
    out = noisy_days(days, noise=noise, seed=seed)
    night = EXAMPLE.min_rps
    for d in range(days):
        if (d + EPOCH_WEEKDAY) % 7 in (0, 6):
            out[d] = night + (out[d] - night) * weekend
    rng = np.random.default_rng([seed, 1])
    for d in rng.choice(days, min(bursts, days), replace=False):
        start = int(rng.integers(8 * 60, 22 * 60 - burst_minutes))
        out[d, start : start + burst_minutes] += burst_rps
    return out.ravel()

"""The reference day of traffic (traffic.synthetic)."""

import numpy as np

from replicaplan.core.calendar import MINUTES_PER_DAY
from replicaplan.scenarios.synthetic import reference_traffic


def test_traffic_shape():
    rate = reference_traffic()
    assert rate.shape == (MINUTES_PER_DAY,)
    assert rate.min() == 12.0
    assert rate[14 * 60] == 60.0  # the hump peaks at 14:00
    assert rate[21 * 60] == 42.0 and rate[21 * 60 + 19] == 42.0 and rate[21 * 60 + 20] == 12.0
    assert np.all(rate[: 9 * 60] == 12.0)  # flat night before the hump starts


def test_working_weeks_are_noisy_days_with_lighter_weekends_and_bursts():
    """Without bursts, weekdays are noisy_days' own (the same draws) and weekend days keep the
    night and half the hump above it; each burst adds burst_rps for burst_minutes, once."""
    from replicaplan.scenarios.synthetic import noisy_days, working_weeks

    base = noisy_days(14, noise=0.1, seed=3)
    calm = working_weeks(14, noise=0.1, seed=3, bursts=0).reshape(14, 1440)
    for d in range(14):
        if d % 7 in (2, 3):  # Saturday and Sunday of a series that starts on a Thursday
            np.testing.assert_allclose(calm[d] - 12.0, 0.5 * (base[d] - 12.0))
        else:
            np.testing.assert_array_equal(calm[d], base[d])
    stormy = working_weeks(14, noise=0.1, seed=3, bursts=2).reshape(14, 1440)
    extra = stormy - calm
    assert (
        np.isclose(extra, 30.0).sum() == 2 * 20 and np.isclose(extra, 0.0).sum() == 14 * 1440 - 40
    )
    hit = np.flatnonzero(np.isclose(extra, 30.0).any(axis=1))
    assert hit.size == 2  # two different days
    minutes = np.flatnonzero(np.isclose(extra, 30.0).ravel()) % 1440
    assert minutes.min() >= 8 * 60 and minutes.max() < 22 * 60

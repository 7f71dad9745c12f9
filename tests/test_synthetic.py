"""The reference day of traffic (traffic.synthetic)."""

import numpy as np

from replicaplan.traffic.synthetic import MINUTES_PER_DAY, reference_traffic


def test_traffic_shape():
    rate = reference_traffic()
    assert rate.shape == (MINUTES_PER_DAY,)
    assert rate.min() == 12.0
    assert rate[14 * 60] == 60.0  # the hump peaks at 14:00
    assert rate[21 * 60] == 42.0 and rate[21 * 60 + 19] == 42.0 and rate[21 * 60 + 20] == 12.0
    assert np.all(rate[: 9 * 60] == 12.0)  # flat night before the hump starts

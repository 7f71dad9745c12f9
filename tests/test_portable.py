import math

import numpy as np

from replicaplan.core import portable


def test_exp_is_the_c_library_exp_bit_for_bit():
    x = np.random.default_rng(0).normal(0, 5, 10_000)
    got = portable.exp(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert all(g == math.exp(v) for g, v in zip(got, x, strict=True))


def test_exp_known_values():
    assert portable.exp([0.0, 1.0, -np.inf]).tolist() == [1.0, math.e, 0.0]
    assert portable.exp(np.zeros((2, 3))).shape == (2, 3)

import dataclasses

import pytest

from replicaplan import grid
from replicaplan.example import EXAMPLE


def test_derived_figures_of_the_running_example():
    assert EXAMPLE.tokens_per_s == 2560.0
    assert EXAMPLE.tpot_s == pytest.approx(0.025)
    assert EXAMPLE.residence_s == pytest.approx(8.0)
    assert EXAMPLE.concurrency_target == pytest.approx(51.2)
    assert EXAMPLE.weight_bytes == 16e9
    assert EXAMPLE.operating_rps == pytest.approx(6.4)


def test_example_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXAMPLE.capacity_rps = 9.0


def test_grid_figures():
    assert grid.kettles() == pytest.approx(933_333.3, abs=0.1)  # "more than 900,000"
    assert grid.ramp_rate() == pytest.approx(110.0)
    with pytest.raises(ValueError, match="kettle_kw"):
        grid.kettles(kettle_kw=0)

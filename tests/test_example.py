import pytest

from replicaplan.core.example import EXAMPLE


def test_derived_figures_of_the_running_example():
    assert EXAMPLE.tokens_per_s == 2560.0
    assert EXAMPLE.tpot_s == pytest.approx(0.025)
    assert EXAMPLE.residence_s == pytest.approx(8.0)
    assert EXAMPLE.concurrency_target == pytest.approx(51.2)
    assert EXAMPLE.weight_bytes == 16e9
    assert EXAMPLE.operating_rps == pytest.approx(6.4)

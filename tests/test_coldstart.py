import pytest
import sympy as sp

from replicaplan.core import symbols as S
from replicaplan.core.example import EXAMPLE
from replicaplan.serving import coldstart as cs


def test_expressions_match_closed_forms():
    assert sp.simplify(cs.weights_time_expression() - S.M_w / (S.g * S.B_channel)) == 0
    assert sp.simplify(cs.weights_time_expression(shared_channel=True) - S.M_w / S.B_channel) == 0
    # the four waits add up, in any unit: a minute for a machine, 30 s of image, 20 s of NVMe
    assert cs.startup_time(20.0, machine_s=60.0, image_s=30.0, warmup_s=10.0) == 120.0


def test_source_tiers_for_70b_in_bf16():
    assert EXAMPLE.big_model_bytes == 140e9
    times = dict(cs.tier_times())
    assert times["network object store"] == pytest.approx(140.0)
    assert times["local NVMe disk"] == pytest.approx(20.0)  # "about 20 s"
    assert times["host memory over PCIe"] == pytest.approx(2.8)


def test_tensor_parallel_divides_only_with_own_channels():
    assert cs.weights_time(140e9, 1e9, gpus=2) == pytest.approx(70.0)
    assert cs.weights_time(140e9, 1e9, gpus=2, shared_channel=True) == pytest.approx(140.0)
    assert cs.weights_time(140e9, 1e9, gpus=8) == pytest.approx(17.5)


def test_startup_sum():
    assert cs.startup_time(20.0, machine_s=120.0, image_s=30.0, warmup_s=40.0) == pytest.approx(
        210.0
    )


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: cs.weights_time(0, 1e9), "weight_bytes"),
        (lambda: cs.weights_time(1e9, -1), "bandwidth"),
        (lambda: cs.weights_time(1e9, 1e9, gpus=0), "gpus"),
        (lambda: cs.weights_time(1e9, 1e9, gpus=1.5), "gpus"),
        (lambda: cs.startup_time(-1), "weights_s"),
        (lambda: cs.startup_time(1, warmup_s=float("nan")), "warmup_s"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()

import numpy as np
import pytest

from replicaplan.economics.spot import (
    SpotConfig,
    expected_gap_hours,
    expected_omega,
    simulate_spot_day,
)
from replicaplan.scenarios.studies import policy_table


@pytest.fixture(scope="module")
def chase():
    return policy_table()[2][1]


@pytest.mark.parametrize(
    "cfg",
    [
        SpotConfig(revocations_per_hour=2.0, startup_s=60),
        SpotConfig(revocations_per_hour=2.0, startup_s=60, recovery="resume"),
        SpotConfig(revocations_per_hour=4.0, startup_s=5, notice_s=2, prompt_tokens=4000),
    ],
)
def test_simulated_waste_matches_what_the_rates_predict(chase, cfg):
    # the simulation draws revocations, requests in flight and their progress at random; the
    # prediction multiplies the revocation rate by the mean waste of one revocation. They must
    # agree within the Poisson noise of the number of revocations.
    s = simulate_spot_day(chase, cfg, seed=1)
    expected_revocations = float(chase.ready.sum() / 60 * cfg.revocations_per_hour)
    noise = 4 / np.sqrt(expected_revocations)
    assert s.revocations == pytest.approx(expected_revocations, rel=noise)
    assert s.omega == pytest.approx(expected_omega(chase, cfg), rel=noise)
    assert s.capacity_gap_hours == pytest.approx(expected_gap_hours(chase, cfg), rel=noise)


def test_omega_follows_revocation_rate_times_cold_start(chase):
    cfg = SpotConfig(revocations_per_hour=0.5)
    s = simulate_spot_day(chase, cfg)
    expected = s.revocations * cfg.startup_s / 3600 / (s.spot_hours + s.waste_hours)
    assert s.omega == pytest.approx(expected, rel=0.05)  # the boot dominates the waste
    lo = simulate_spot_day(chase, SpotConfig(revocations_per_hour=0.1))
    assert lo.omega < s.omega


def test_resume_wastes_less_and_keeps_users_waiting_less(chase):
    restart = simulate_spot_day(chase, SpotConfig(startup_s=30, recovery="restart"))
    resume = simulate_spot_day(chase, SpotConfig(startup_s=30, recovery="resume"))
    assert resume.waste_hours < restart.waste_hours
    assert resume.extra_wait_s < restart.extra_wait_s / 10


def test_notice_longer_than_start_up_closes_the_gap(chase):
    assert simulate_spot_day(chase, SpotConfig(notice_s=600)).capacity_gap_hours == 0
    assert simulate_spot_day(chase, SpotConfig(notice_s=30)).capacity_gap_hours > 0


def test_two_layers(chase):
    base = int(chase.ready.min())
    two = simulate_spot_day(chase, SpotConfig(), base=base)
    all_spot = simulate_spot_day(chase, SpotConfig())
    assert two.on_demand_hours == pytest.approx(base * 24)
    assert 0 < two.saving < all_spot.saving
    assert two.cost < two.all_on_demand_cost


def test_no_pay_off_when_discount_below_loss(chase):
    s = simulate_spot_day(chase, SpotConfig(discount=0.0))
    assert s.saving < 0


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(discount=1.0), "discount"),
        (dict(revocations_per_hour=-1), "revocations_per_hour"),
        (dict(recovery="pray"), "recovery"),
        (dict(notice_s=-5), "notice_s"),
    ],
)
def test_bad_config(kwargs, name):
    with pytest.raises(ValueError, match=name):
        SpotConfig(**kwargs)

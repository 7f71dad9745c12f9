import numpy as np
import pytest
import sympy as sp

from replicaplan.core import symbols as S
from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import Startup
from replicaplan.planner import reserve as rs


def test_first_order_expansion():
    assert sp.simplify(rs.first_order_future_load() - (S.lam_of(S.t) + S.lam_dot * S.T_start)) == 0


def test_reserve_closed_forms():
    assert (
        sp.simplify(rs.ramp_reserve_expression() - S.lam_dot * S.T_start / (S.rho_star * S.mu_star))
        == 0
    )
    assert sp.simplify(rs.step_reserve_expression() - S.delta_lam / (S.rho_star * S.mu_star)) == 0


def test_reserve_satisfies_the_condition_at_equality():
    cond = rs.coverage_condition()
    r = rs.ramp_reserve_expression()
    lhs = cond.lhs.subs(S.R, r)
    assert sp.simplify(lhs - rs.first_order_future_load()) == 0


def test_step_of_the_simulated_day():
    # the 21:00 event adds 30 req/s; replicas of 8 req/s kept at 80 %
    assert rs.step_reserve(30.0, ReplicaRate(8.0, 0.8)) == 5  # 30 / 6.4 = 4.7 → 5
    assert rs.step_reserve(32.0, ReplicaRate(8.0, 0.8)) == 5  # exactly 5, not 6
    assert rs.step_reserve(0.0, ReplicaRate(8.0, 0.8)) == 0


def test_ramp_reserve_grows_with_slope_times_delay():
    base = rs.ramp_reserve(
        0.01, Startup(8), ReplicaRate(8.0, 0.8)
    )  # 0.01 req/s per s for 8 min: 4.8 req/s
    assert base == 1
    assert rs.ramp_reserve(0.02, Startup(8), ReplicaRate(8.0, 0.8)) == 2
    assert rs.ramp_reserve(0.01, Startup(16), ReplicaRate(8.0, 0.8)) == 2
    assert rs.ramp_reserve(0.01, Startup(0), ReplicaRate(8.0, 0.8)) == 0


def test_power_station_ramp():
    assert rs.ramp_load(100.0, 10.0) == 1000.0  # 100 MW/min for 10 min


def test_scale_to_zero():
    out = rs.scale_to_zero(idle_s=6 * 3600, startup_s=480, price_per_replica_hour=2.0)
    assert out["saved_eur"] == pytest.approx((6 * 3600 - 480) / 3600 * 2.0)
    assert out["first_ttft_penalty_s"] == 480 and out["worth_it"]
    assert not rs.scale_to_zero(idle_s=300, startup_s=480, price_per_replica_hour=2.0)["worth_it"]


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rs.ramp_reserve(-1, Startup(1), ReplicaRate(8, 0.8)), "ramp_rps_per_s"),
        (lambda: rs.step_reserve(-3, ReplicaRate(8, 0.8)), "step_rps"),
        (lambda: rs.scale_to_zero(1, 1, 0), "price_per_replica_hour"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_a_log_that_never_rises_needs_no_spares():
    """A falling or flat log: no step, no ramp, so no spare replica (the rise is taken from 0)."""
    falling = np.linspace(50.0, 10.0, 60)
    flat = np.full(60, 20.0)
    for rate in (falling, flat):
        assert rs.largest_step_reserve(rate, ReplicaRate(8.0, 0.8)) == 0
        assert rs.steepest_ramp_reserve(rate, ReplicaRate(8.0, 0.8), Startup(8)) == 0
        assert rs.spares_for(rate, ReplicaRate(8.0, 0.8), Startup(8)) == 0


def test_scale_to_zero_is_worth_any_saving():
    """Idle one second longer than the start-up: a second of a replica-hour saved, 2/3600."""
    out = rs.scale_to_zero(idle_s=481, startup_s=480, price_per_replica_hour=2.0)
    assert out["saved_eur"] == pytest.approx(2.0 / 3600)
    assert out["worth_it"]


def test_the_steepest_ramp_of_a_log_by_hand():
    """A log that climbs 1 req/s a minute for 20 minutes: over any 8 minutes it rises 8 req/s,
    a slope of 8/480 req/s², so 8 minutes of start-up need ⌈8/(0.8 · 8)⌉ = ⌈1.25⌉ = 2 spares;
    with 3 minutes, ⌈3/6.4⌉ = 1."""
    rate = np.r_[np.full(5, 10.0), 10.0 + np.arange(1, 21), np.full(5, 30.0)]
    assert rs.steepest_ramp_reserve(rate, ReplicaRate(8.0, 0.8), Startup(8)) == 2
    assert rs.steepest_ramp_reserve(rate, ReplicaRate(8.0, 0.8), Startup(3)) == 1
    assert (
        rs.steepest_ramp_reserve(rate, ReplicaRate(8.0, 0.8), Startup(0)) == 0
    )  # no start-up: no ramp
    # a log no longer than the start-up has no window to measure: none; one minute longer has
    assert rs.steepest_ramp_reserve(np.arange(8.0) * 10, ReplicaRate(8.0, 0.8), Startup(8)) == 0
    assert (
        rs.steepest_ramp_reserve(np.arange(9.0) * 10, ReplicaRate(8.0, 0.8), Startup(8)) == 13
    )  # ⌈80/6.4⌉
    assert (
        rs.spares_for(rate, ReplicaRate(8.0, 0.8), Startup(8)) == 2
    )  # the step of 1 req/s needs only 1


def test_scale_to_zero_saves_nothing_when_the_silence_is_shorter_than_the_start_up():
    out = rs.scale_to_zero(idle_s=300, startup_s=480, price_per_replica_hour=2.0)
    assert out["saved_eur"] == 0.0 and not out["worth_it"]
    assert out["first_ttft_penalty_s"] == 480


def test_the_ramp_reserve_at_a_whole_number_of_replicas():
    """A ramp that adds exactly ρ*μ* = 6.4 req/s over the start-up asks for exactly one spare;
    one that adds 6.5 asks for two (⌈1.016⌉): the ceiling sits on the edge, where a slope or a
    start-up counted in other units than the seconds of the other would move it."""
    flat = np.full(5, 10.0)
    exact = np.r_[flat, 10.0 + 0.8 * np.arange(1, 9), np.full(5, 16.4)]  # +6.4 over 8 minutes
    above = np.r_[flat, 10.0 + 0.8125 * np.arange(1, 9), np.full(5, 16.5)]  # +6.5
    assert rs.steepest_ramp_reserve(exact, ReplicaRate(8.0, 0.8), Startup(8)) == 1
    assert rs.steepest_ramp_reserve(above, ReplicaRate(8.0, 0.8), Startup(8)) == 2
    with pytest.raises(ValueError, match="startup_min"):
        rs.steepest_ramp_reserve(exact, ReplicaRate(8.0, 0.8), Startup(-1))

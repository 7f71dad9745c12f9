import math

import numpy as np
import pytest
import sympy as sp

from replicaplan.core import symbols as S
from replicaplan.economics import cost
from replicaplan.scenarios.studies import policy_table
from replicaplan.serving.replica import ReplicaModel


def test_symbolic_forms():
    expected = S.C_hour / (3600 * S.nu_star * S.rho_bar)
    assert sp.simplify(cost.cost_per_token_expression() - expected) == 0
    assert sp.simplify(cost.spot_factor_expression() - (1 - S.d) / (1 - S.omega)) == 0
    assert cost.spot_break_even() == S.omega  # pays off iff d > ω


def test_source_numbers():
    assert cost.tokens_per_hour(2560) == pytest.approx(9.216e6)  # "9.2 million"
    assert round(cost.cost_per_token(2.0, 2560, 1.0) * 1e6, 2) == 0.22
    assert round(2 / 9.216, 3) == round(cost.cost_per_token(2.0, 2560, 1.0) * 1e6, 3)  # 21.7 cents
    assert round(cost.cost_per_token(2.0, 2560, 0.36) * 1e6, 2) == 0.60
    assert cost.cost_per_token(2.0, 2560, 1.0) == pytest.approx(2.2e-7, rel=0.02)
    assert round(cost.spot_cost_factor(0.6, 0.1), 2) == 0.44
    assert cost.spot_cost_factor(0.2, 0.5) == pytest.approx(1.6)
    assert cost.spot_pays_off(0.6, 0.1) and not cost.spot_pays_off(0.2, 0.5)
    assert not cost.spot_pays_off(0.3, 0.3)


def test_idle_capacity_multiplies_the_cost():
    for rho in (0.9, 0.5, 0.2):
        assert cost.cost_per_token(2.0, 2560, rho) == pytest.approx(
            cost.cost_per_token(2.0, 2560, 1.0) / rho
        )


def test_day_priced():
    priced = cost.price_book_day(policy_table())
    assert [round(p.paid_hours, 1) for p in priced] == [192.0, 94.4, 94.4, 166.4, 96.1]
    always = priced[0]
    assert always.cost == pytest.approx(384.0)
    # the always-on fleet pays 1/ρ̄ times the full-use price per token
    assert always.per_million == pytest.approx(
        cost.cost_per_token(2.0, 2560, always.utilization) * 1e6, rel=1e-9
    )
    assert min(p.per_million for p in priced) in (priced[1].per_million, priced[2].per_million)


def test_phase_prices():
    prices = cost.phase_prices()
    assert prices["output_per_million"] == pytest.approx(cost.cost_per_token(2.0, 2560, 1.0) * 1e6)
    assert prices["output_to_input"] > 5
    # by hand: an output token is 25 ms / 64 of a step, an input token 2 N_p/(η P_peak) s
    for eta in (0.3, 0.5, 1.0):
        ratio = cost.phase_prices(prefill_efficiency=eta)["output_to_input"]
        assert ratio == pytest.approx((0.025 / 64) / (2 * 8e9 / (eta * 1e15)))
    with pytest.raises(ValueError, match="prefill_efficiency"):
        cost.phase_prices(prefill_efficiency=1.5)
    # another GPU's peak: η applies to it, not to the running example's 1 PFLOP/s
    from replicaplan.serving.replica import ReplicaModel

    h100 = cost.phase_prices(model=ReplicaModel(), prefill_efficiency=0.5, peak_flops=989e12)
    assert h100["input_per_million"] == pytest.approx(2 / 3600 * 2 * 8e9 / (0.5 * 989e12) * 1e6)
    with pytest.raises(ValueError, match="peak_flops"):
        cost.phase_prices(model=ReplicaModel(), prefill_efficiency=0.5)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: cost.cost_per_token(2, 2560, 0), "utilization"),
        (lambda: cost.cost_per_token(2, 2560, 1.2), "utilization"),
        (lambda: cost.cost_per_token(0, 2560, 1), "price_per_replica_hour"),
        (lambda: cost.cost_per_token(2, -1, 1), "tokens_per_s"),
        (lambda: cost.spot_cost_factor(1.0, 0.1), "discount"),
        (lambda: cost.spot_cost_factor(-0.1, 0.1), "discount"),
        (lambda: cost.spot_cost_factor(0.5, 1.0), "lost_fraction"),
        (lambda: cost.spot_cost_factor(0.5, -0.2), "lost_fraction"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_spot_factor_over_a_map_equals_the_scalar_cases():
    dd, ww = np.meshgrid([0.0, 0.2, 0.6], [0.1, 0.5])
    grid = cost.spot_cost_factor(dd, ww)
    for i in range(2):
        for j in range(3):
            assert grid[i, j] == pytest.approx(cost.spot_cost_factor(dd[i, j], ww[i, j]))
    assert grid[0, 2] == pytest.approx(0.4 / 0.9) and grid[1, 1] == pytest.approx(1.6)
    with pytest.raises(ValueError, match="lost_fraction"):
        cost.spot_cost_factor(dd, ww + 0.6)


def test_the_bill_split_by_phase_by_hand():
    m = ReplicaModel()
    # the running example: an input token is 2 × 8e9 FLOP at 0.5 PFLOP/s = 32 µs of a replica;
    # an output token at 40 sequences is TPOT(40)/40, its share of one decode step
    input_s, output_s = cost.phase_seconds(m, 40)
    assert input_s == pytest.approx(2 * 8e9 / 0.5e15)
    tpot40 = (16e9 + 40 * 2000 * 131072) / m.bandwidth
    assert output_s == pytest.approx(tpot40 / 40)
    # a bill of 100 over a million input and a million output tokens, output 3 × input
    p_in, p_out = cost.split_by_phase(100.0, 1e6, 1e6, 1.0, 3.0)
    assert (p_in, p_out) == (25.0, 75.0)
    # any split recovers the bill and keeps the ratio of the seconds
    p_in, p_out = cost.split_by_phase(57.0, 3.1e6, 0.4e6, input_s, output_s)
    assert p_in * 3.1 + p_out * 0.4 == pytest.approx(57.0)
    assert p_out / p_in == pytest.approx(output_s / input_s)


def test_a_replica_hour_pays_for_every_gpu_at_its_list_price():
    one = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb")
    four = ReplicaModel.from_hardware("llama-3-70b", "h100-sxm", gpus=4)
    assert one.price_per_replica_hour == 1.99 and one.currency == "USD"
    assert four.price_per_replica_hour == pytest.approx(4 * 3.24)
    assert ReplicaModel().price_per_replica_hour == 2.0  # the running example's 2 € an hour
    fitted, _ = ReplicaModel.fit_notes(
        "llama-3-8b", tpot=[(1, 0, 0.02), (64, 2000, 0.03)], ttft=[(100, 0.1), (200, 0.2)]
    )
    assert fitted.price_per_replica_hour is None


# ------------------------------------------------------------------ what the mutation run found
def test_spotserve_saving_is_the_published_figure():
    """SpotServe (Miao et al., ASPLOS 2024): 54 % less than on-demand instances only."""
    assert cost.SPOTSERVE_SAVING == 0.54


def test_spot_factor_with_one_array_and_one_number():
    d = np.array([0.2, 0.6])
    assert cost.spot_cost_factor(d, 0.1) == pytest.approx([0.8 / 0.9, 0.4 / 0.9])
    assert cost.spot_cost_factor(0.6, np.array([0.0, 0.5])) == pytest.approx([0.4, 0.8])
    # the edges: nothing lost is the discount alone; a share of 1 is refused on either path
    assert cost.spot_cost_factor(0.6, 0.0) == pytest.approx(0.4)
    for bad in (np.array([0.5, 1.0]), 1.0):
        with pytest.raises(ValueError, match="lost_fraction"):
            cost.spot_cost_factor(np.array([0.2, 0.3]) if np.ndim(bad) else 0.2, bad)


def test_a_priced_policy_cannot_be_changed():
    import dataclasses

    (priced,) = cost.price_day(policy_table()[:1], cost.Pricing(2.0, 320.0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        priced.cost = 0.0


def test_an_output_tokens_price_is_the_cost_per_token_of_a_full_decode_batch():
    """By another road: a replica decoding its whole batch B every TPOT(B) serves B/TPOT(B)
    tokens a second, and c = C/(3600 ν) at full use is what each of them costs."""
    model = ReplicaModel()
    prices = cost.phase_prices(2.0, model)
    nu = model.batch / float(model.tpot(model.batch))
    expected = cost.cost_per_token(2.0, nu, 1.0) * 1e6
    assert prices["output_per_million"] == pytest.approx(expected, rel=1e-12)


def test_the_spot_map_refuses_each_kind_of_bad_entry():
    good = np.array([0.0, 0.5])
    assert cost.spot_cost_factor(good, good) == pytest.approx([1.0, 1.0])  # 0 is allowed
    for bad in (np.array([0.2, -0.1]), np.array([np.nan, 0.2]), np.array([0.2, np.inf])):
        with pytest.raises(ValueError, match="discount must lie in \\[0, 1\\) everywhere"):
            cost.spot_cost_factor(bad, good)


@pytest.mark.parametrize(
    "price, tokens, message",
    [
        (0.0, 320.0, "price_per_replica_hour must be > 0"),
        (math.nan, 320.0, "price_per_replica_hour must be finite"),
        (2.0, 0.0, "tokens_per_request must be > 0"),
        (2.0, -320.0, "tokens_per_request must be > 0"),
    ],
)
def test_a_bad_pricing_is_refused_by_its_name(price, tokens, message):
    with pytest.raises(ValueError, match=message):
        cost.Pricing(price, tokens)


def test_a_run_is_priced_by_hand_and_only_through_a_pricing():
    """10 replica-hours at 3 € over 1,000 requests of 500 tokens: 30 € for 500,000 tokens,
    60 € a million; two loose numbers in place of the ``Pricing`` are refused by name."""
    assert cost.price_run(10.0, 1_000, cost.Pricing(3.0, 500.0)) == (30.0, 500_000.0, 60.0)
    with pytest.raises(TypeError, match=r"pricing must be a Pricing\(price_per_replica_hour"):
        cost.price_run(10.0, 1_000, 3.0)
    assert cost.BOOK_PRICING == cost.Pricing(2.0, 320.0)  # the facts' 2 € and 320 tokens


def test_a_pricing_is_frozen_so_a_checked_one_stays_checked():
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        cost.BOOK_PRICING.price_per_replica_hour = -1.0  # type: ignore[misc]

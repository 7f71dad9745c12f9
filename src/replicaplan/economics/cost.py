"""What a token costs: the hourly price divided by the tokens served in that hour.

    c = C_hour / (3600 · ν* · ρ̄)

with C_hour the price of a replica-hour, ν* the tokens/s a replica sustains within its promises
and ρ̄ the mean utilization (tokens served over tokens the replicas on could have served). The
factor 1/ρ̄ is the price of idle capacity: the margin 1 − ρ*, the reserve for the start-up
delay, the slow scale-down, the warm replica kept against scale to zero, all end up there.

Spot (preemptible) capacity sells at a discount d and may be taken back; if a share ω of the
work paid for is lost or redone (the cold start of the replacement included), the cost is

    c_spot = (1 − d) / (1 − ω) · c,

which pays off while d > ω.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from replicaplan.core import _check, derived
from replicaplan.core.example import EXAMPLE
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.day import DayPolicy, DayResult

if TYPE_CHECKING:
    import sympy as sp

SPOTSERVE_SAVING = 0.54
"""Cost reduction SpotServe reports against on-demand instances only, on real revocation traces
(Miao et al., ASPLOS 2024): a published reference figure, not computed here."""


def tokens_per_hour_expression() -> sp.Expr:
    """Tokens served in an hour: ∫₀³⁶⁰⁰ ν* ρ̄ dt, the replica's rate times its mean use."""
    import sympy as sp

    from replicaplan.core.symbols import nu_star, rho_bar, t

    return sp.integrate(nu_star * rho_bar, (t, 0, 3600))


def cost_per_token_expression() -> sp.Expr:
    """c = C_hour / (tokens served in the hour) = C_hour / (3600 ν* ρ̄)."""
    from replicaplan.core.symbols import C_hour

    return C_hour / tokens_per_hour_expression()


def spot_factor_expression() -> sp.Expr:
    """c_spot/c: the price per useful token on spot over the price on demand.

    An hour of spot costs (1 − d) C_hour and does (1 − ω) of an hour's useful work; an hour on
    demand costs C_hour and does all of it.
    """
    from replicaplan.core.symbols import C_hour, d, omega

    spot = (1 - d) * C_hour / (1 - omega)
    on_demand = C_hour
    return spot / on_demand  # C_hour cancels


def spot_break_even() -> sp.Expr:
    """The discount at which spot costs the same as on-demand: solve c_spot/c = 1 for d."""
    import sympy as sp

    from replicaplan.core.symbols import d

    (solution,) = sp.solve(sp.Eq(spot_factor_expression(), 1), d)
    return solution


def derivations() -> dict:
    """The numeric functions ``core.derived`` holds for this module (see ``tools/derive.py``)."""
    from replicaplan.core.symbols import C_hour, d, nu_star, omega, rho_bar

    return {
        "cost_per_token": (
            (C_hour, nu_star, rho_bar),
            cost_per_token_expression(),
            "math",
            "cost_per_token_expression()",
        ),
        "tokens_per_hour": (
            (nu_star, rho_bar),
            tokens_per_hour_expression(),
            "math",
            "tokens_per_hour_expression()",
        ),
        "spot_factor": ((d, omega), spot_factor_expression(), "numpy", "spot_factor_expression()"),
    }


def cost_per_token(price_per_replica_hour: float, tokens_per_s: float, utilization: float) -> float:
    """EUR (or any currency) per generated token: C_hour / (3600 ν* ρ̄).

    >>> round(cost_per_token(2.0, 2560, 1.0) * 1e6, 3)    # EUR per million tokens
    0.217
    """
    price_per_replica_hour = _check.positive("price_per_replica_hour", price_per_replica_hour)
    tokens_per_s = _check.positive("tokens_per_s", tokens_per_s)
    utilization = _check.fraction("utilization", utilization)
    return float(derived.cost_per_token(price_per_replica_hour, tokens_per_s, utilization))


def tokens_per_hour(tokens_per_s: float) -> float:
    """Tokens a full replica generates in an hour: 3600 ν* (ρ̄ = 1)."""
    return float(derived.tokens_per_hour(_check.positive("tokens_per_s", tokens_per_s), 1))


def spot_cost_factor(discount, lost_fraction):
    """(1 − d)/(1 − ω): the cost of a spot token relative to an on-demand one.

    Either argument may be an array (a map over discounts and lost shares), each in [0, 1).

    >>> round(spot_cost_factor(0.6, 0.1), 3), spot_cost_factor(0.2, 0.5)
    (0.444, 1.6)
    """
    if np.ndim(discount) or np.ndim(lost_fraction):
        dd, ww = np.asarray(discount, dtype=float), np.asarray(lost_fraction, dtype=float)
        for name, arr in (("discount", dd), ("lost_fraction", ww)):
            if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr >= 1):
                raise ValueError(f"{name} must lie in [0, 1) everywhere")
        return derived.spot_factor(dd, ww)
    discount = _check.fraction("discount", discount, low_open=False, high_open=True)
    lost_fraction = _check.fraction("lost_fraction", lost_fraction, low_open=False, high_open=True)
    return float(derived.spot_factor(discount, lost_fraction))


def spot_pays_off(discount: float, lost_fraction: float) -> bool:
    """True when spot is cheaper per useful token, i.e. when the discount exceeds the lost share."""
    return spot_cost_factor(discount, lost_fraction) < 1.0


# ----------------------------------------------------------------------------- the day priced


@dataclass(frozen=True)
class PricedPolicy:
    """One policy of the simulated day, priced."""

    name: str
    paid_hours: float
    cost: float
    tokens: float
    utilization: float
    """The policy table's use (over ready replicas)."""
    paid_utilization: float
    """Use over the replicas paid, starting ones included: the ρ̄ that sets the price."""

    @property
    def per_million(self) -> float:
        """Currency per million tokens served."""
        return self.cost / self.tokens * 1e6


@dataclass(frozen=True)
class Pricing:
    """What every run of a fleet is priced at, checked when made: the price of a replica-hour
    (> 0) and the output tokens a served request carries (> 0: the running example's 320, or
    a log's own mean answer, ``OperatingPoint.mean_output``)."""

    price_per_replica_hour: float
    tokens_per_request: float

    def __post_init__(self) -> None:
        for name in ("price_per_replica_hour", "tokens_per_request"):
            object.__setattr__(self, name, _check.positive(name, getattr(self, name)))


BOOK_PRICING = Pricing(EXAMPLE.price_per_replica_hour, EXAMPLE.answer_tokens)
"""The running example's: 2 € a replica-hour, 320-token answers."""


def price_run(
    paid_hours: float, served_requests: float, pricing: Pricing
) -> tuple[float, float, float]:
    """(cost, tokens served, cost per million tokens) of any run of a fleet: the one price.

    The hours paid (starting replicas included) times the hourly price, over the tokens the
    requests actually served carry, both of ``pricing`` (checked when it was made). The
    simulated day, the planner's replays, its HPA and KEDA replays and its report all price
    through here.

    >>> cost, tokens, per_million = price_run(94.4, 1_000_000, Pricing(2.0, 320.0))
    >>> cost, tokens, round(per_million, 6)
    (188.8, 320000000.0, 0.59)
    """
    pricing = _check.instance("pricing", pricing, Pricing)
    paid_hours = _check.non_negative("paid_hours", paid_hours)
    served_requests = _check.positive("served_requests", served_requests)
    cost = paid_hours * pricing.price_per_replica_hour
    tokens = served_requests * pricing.tokens_per_request
    return cost, tokens, cost / tokens * 1e6


def price_day(rows: list[tuple[DayPolicy, DayResult]], pricing: Pricing) -> list[PricedPolicy]:
    """Price each policy of a day (``day.run_policies``) through ``price_run`` at ``pricing``.

    Requests served in a minute are min(λ, ready capacity) · 60; each carries
    ``pricing.tokens_per_request`` output tokens (the running example's 320, or a log's own
    mean).
    """
    priced = []
    for policy, r in rows:
        cost, tokens, _ = price_run(r.paid_hours, r.served_requests, pricing)
        priced.append(
            PricedPolicy(policy.name, r.paid_hours, cost, tokens, r.utilization, r.paid_utilization)
        )
    return priced


def price_book_day(rows: list[tuple[DayPolicy, DayResult]]) -> list[PricedPolicy]:
    """The book's simulated day priced as the running example: 2 € an hour, 320-token answers."""
    return price_day(rows, BOOK_PRICING)


def phase_prices(
    price_per_replica_hour: float = EXAMPLE.price_per_replica_hour,
    model: ReplicaModel | None = None,
    batch: int | None = None,
    prefill_efficiency: float | None = None,
    peak_flops: float | None = None,
) -> dict:
    """Price of an input (prefill) and an output (decode) token by the GPU time each takes.

    A prompt token costs 2 N_p / (η P_peak) seconds of a replica (compute-bound prefill, η the
    share of the peak FLOP/s a prefill reaches: the model's own unless ``prefill_efficiency`` is
    given, as a share of ``peak_flops``, which a model of one's own must come with, since a
    ``ReplicaModel`` keeps only the FLOP/s its prefill reaches); an output token costs
    TPOT(b)/b, its share of a decode step with b sequences (memory-bound). Returns currency per
    million tokens for each phase and their ratio, which grows in proportion to η and falls as
    the batch fills.

    >>> round(phase_prices(prefill_efficiency=0.5)["output_to_input"], 1)
    12.2
    """
    price_per_replica_hour = _check.positive("price_per_replica_hour", price_per_replica_hour)
    if prefill_efficiency is not None:
        eta = _check.fraction("prefill_efficiency", prefill_efficiency)
        if peak_flops is None and model is not None:
            raise ValueError("peak_flops must be given with prefill_efficiency and a model")
        peak = EXAMPLE.peak_flops if peak_flops is None else peak_flops
        peak = _check.positive("peak_flops", peak)
        model = replace(model or ReplicaModel(), prefill_flops=peak * eta)
    model = model or ReplicaModel()
    input_s, output_s = phase_seconds(model, batch)
    per_second = price_per_replica_hour / 3600
    return {
        "input_per_million": per_second * input_s * 1e6,
        "output_per_million": per_second * output_s * 1e6,
        "output_to_input": output_s / input_s,
    }


def phase_seconds(model: ReplicaModel, batch: float | None = None) -> tuple[float, float]:
    """Seconds of a replica an input token and an output token take: 2 N_p/F_ach (its share of
    the arithmetic of the step that computes it) and TPOT(b)/b (its share of a decode step with
    b sequences, the full batch unless ``batch`` is given; b may be fractional, a mean)."""
    b = model.batch if batch is None else _check.positive("batch", batch)
    return 2 * model.params / model.prefill_flops, float(model.tpot(b)) / b


def split_by_phase(
    cost: float, input_tokens: float, output_tokens: float, input_s: float, output_s: float
) -> tuple[float, float]:
    """(price per million input tokens, per million output tokens) that recover ``cost``.

    The bill is shared by the replica time each token takes: an output token costs
    output_s/input_s times an input token, and the two prices are the p_in, p_out with

        p_in · N_in + p_out · N_out = cost,      p_out / p_in = output_s / input_s.

    >>> split_by_phase(100.0, 1e6, 1e6, 1.0, 3.0)  # 1/4 of the bill to input, 3/4 to output
    (25.0, 75.0)
    """
    cost = _check.non_negative("cost", cost)
    input_tokens = _check.non_negative("input_tokens", input_tokens)
    output_tokens = _check.positive("output_tokens", output_tokens)
    input_s = _check.positive("input_s", input_s)
    output_s = _check.positive("output_s", output_s)
    per_output = cost / (output_tokens + input_tokens * input_s / output_s)
    return per_output * input_s / output_s * 1e6, per_output * 1e6

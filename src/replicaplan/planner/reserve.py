"""Reserve against the start-up delay: ramps, steps, calendars, and scale to zero.

A replica called at time t serves from t + T_start, so capacity at t must already cover the
load that will arrive by then:

    N_r(t) ρ* μ*  ≥  λ(t + T_start)  ≈  λ(t) + λ'(t) T_start.

A reactive controller knows only λ(t) and provides λ(t)/(ρ* μ*); the spare replicas it must
keep on top are ⌈λ'_max T_start / (ρ* μ*)⌉ for the steepest ramp it must absorb, and
⌈Δλ / (ρ* μ*)⌉ for a step of height Δλ, where the first-order expansion no longer holds.
Both are solved below with sympy from the same inequality.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from replicaplan.core import _check, derived
from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import Startup

if TYPE_CHECKING:
    import sympy as sp


def coverage_condition() -> sp.Rel:
    """N_r ρ* μ* ≥ λ(t + T_start), with N_r = λ(t)/(ρ*μ*) + R for a reactive controller."""
    import sympy as sp

    from replicaplan.core.symbols import R, T_start, lam_of, mu_star, rho_star, t

    n_r = lam_of(t) / (rho_star * mu_star) + R
    return sp.Ge(n_r * rho_star * mu_star, lam_of(t + T_start))


def _smallest_reserve(future_load: sp.Expr) -> sp.Expr:
    """Solve the coverage condition at equality for R, given the load at t + T_start."""
    import sympy as sp

    from replicaplan.core.symbols import R, T_start, lam_of, t

    cond = coverage_condition()
    boundary = sp.Eq(cond.lhs, cond.rhs.subs(lam_of(t + T_start), future_load))
    (r,) = sp.solve(boundary, R)
    return sp.simplify(r)


def first_order_future_load() -> sp.Expr:
    """λ(t + T_start) to first order in T: λ(t) + λ'(t) T, from sympy's series."""
    import sympy as sp

    from replicaplan.core.symbols import T_start, lam_dot, lam_of, t

    series = sp.series(lam_of(t + T_start), T_start, 0, 2).removeO().doit()
    return series.subs(sp.Derivative(lam_of(t), t), lam_dot)


def ramp_reserve_expression() -> sp.Expr:
    """R = λ' T_start / (ρ* μ*) (before rounding up)."""
    return _smallest_reserve(first_order_future_load())


def step_reserve_expression() -> sp.Expr:
    """R = Δλ / (ρ* μ*) (before rounding up)."""
    from replicaplan.core.symbols import delta_lam, lam_of, t

    return _smallest_reserve(lam_of(t) + delta_lam)


def derivations() -> dict:
    """The numeric functions ``core.derived`` holds for this module (see ``tools/derive.py``)."""
    import sympy as sp

    from replicaplan.core.symbols import T_start, delta_lam, lam_dot, mu_star, rho_star

    return {
        "ramp_reserve": (
            (lam_dot, T_start, rho_star, mu_star),
            sp.ceiling(ramp_reserve_expression()),
            "math",
            "⌈ramp_reserve_expression()⌉",
        ),
        "step_reserve": (
            (delta_lam, rho_star, mu_star),
            sp.ceiling(step_reserve_expression()),
            "math",
            "⌈step_reserve_expression()⌉",
        ),
    }


def ramp_reserve(ramp_rps_per_s: float, startup: Startup, replica_rate: ReplicaRate) -> int:
    """⌈λ'_max T_start / (ρ* μ*)⌉: spare replicas for a ramp of ``ramp_rps_per_s`` (req/s per
    s) over a start-up of ``startup``, at ``replica_rate``'s ρ*μ*."""
    ramp_rps_per_s = _check.non_negative("ramp_rps_per_s", ramp_rps_per_s)
    rr = _check.instance("replica_rate", replica_rate, ReplicaRate)
    return int(
        derived.ramp_reserve(ramp_rps_per_s, startup.seconds, rr.target_utilization, rr.mu_star_rps)
    )


def step_reserve(step_rps: float, replica_rate: ReplicaRate) -> int:
    """⌈Δλ / (ρ* μ*)⌉: spare replicas for a sudden step of ``step_rps`` req/s at
    ``replica_rate``'s ρ*μ*."""
    step_rps = _check.non_negative("step_rps", step_rps)
    rr = _check.instance("replica_rate", replica_rate, ReplicaRate)
    return int(derived.step_reserve(step_rps, rr.target_utilization, rr.mu_star_rps))


def ramp_load(ramp_per_min: float, startup_min: float) -> float:
    """Load the demand adds while a new unit starts: λ' · T_start (any consistent units)."""
    return _check.non_negative("ramp_per_min", ramp_per_min) * _check.non_negative(
        "startup_min", startup_min
    )


def scale_to_zero(idle_s: float, startup_s: float, price_per_replica_hour: float) -> dict:
    """What switching every replica off over an idle period of ``idle_s`` seconds trades.

    The replica must be called again ``startup_s`` before it can serve, and is paid while it
    starts, so the hours saved are (idle − T_start)/3600 when the next request is not
    anticipated; in exchange the first request after the silence waits T_start more for its
    first token. Returns ``{"saved_eur", "first_ttft_penalty_s", "worth_it"}`` where
    ``worth_it`` says whether any money is saved at all.
    """
    idle_s = _check.non_negative("idle_s", idle_s)
    startup_s = _check.non_negative("startup_s", startup_s)
    price_per_replica_hour = _check.positive("price_per_replica_hour", price_per_replica_hour)
    saved = max(0.0, idle_s - startup_s) / 3600 * price_per_replica_hour
    return {"saved_eur": saved, "first_ttft_penalty_s": startup_s, "worth_it": saved > 0}


# ------------------------------------------------------------------ on a log's traffic


def largest_step_reserve(rate, replica_rate: ReplicaRate) -> int:
    """Spares for the largest minute-to-minute rise in ``rate``: ⌈Δλ_max/(ρ*μ*)⌉ (0 if none)."""
    rate = _check.rates("rate", rate)
    rise = float(np.max(np.diff(rate), initial=0.0))  # initial=0: a falling log needs none
    return step_reserve(rise, replica_rate)


def steepest_ramp_reserve(rate, replica_rate: ReplicaRate, startup: Startup) -> int:
    """Spares for the steepest ramp in ``rate``: ⌈λ'_max T_start/(ρ*μ*)⌉, where λ'_max is the
    largest rise over any T_start consecutive minutes, divided by T_start."""
    rate = _check.rates("rate", rate)
    k = startup.minutes
    if k == 0 or rate.size <= k:
        return 0
    slope = float(np.max(rate[k:] - rate[:-k], initial=0.0)) / startup.seconds
    return ramp_reserve(slope, startup, replica_rate)


def spares_for(rate, replica_rate: ReplicaRate, startup: Startup) -> int:
    """The spares of the chasing policy: enough for the log's steepest ramp and largest step."""
    return max(
        steepest_ramp_reserve(rate, replica_rate, startup),
        largest_step_reserve(rate, replica_rate),
    )

"""How much of the GPU is really used: MFU, MBU and the decode roofline.

    MFU = 2 N_p ν / P_peak                           (model FLOPs utilization)
    MBU = (M_w + M_kv) / TPOT / B_peak               (model bandwidth utilization)
    TPOT_min = (M_w + M_kv) / B_peak                 (the step at MBU = 1: the memory's floor)
    m_kv = 2 · n_layers · n_kv · d_head · s_value    (KV-cache bytes per token: keys and values)
    I(b) = 2 N_p b / (M_w + b n_ctx m_kv)            (FLOP per byte of a decode step, b sequences)

I(b) tends to 2 N_p/(n_ctx m_kv) as b grows: batching amortizes the weights, not the cache each
sequence carries. Against the ridge P_peak/B_peak, that limit caps the decode MFU, and fixes the
context below which a large enough batch can reach the ridge. The sympy derivations below give
each of these closed forms; the numeric functions evaluate them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from replicaplan.core import _check, derived

if TYPE_CHECKING:
    import sympy as sp


def model_flops_expression() -> sp.Expr:
    """FLOP/s the model does: 2 N_p FLOP per token × ν tokens/s."""
    from replicaplan.core.symbols import N_p, nu

    return 2 * N_p * nu


def mfu_expression() -> sp.Expr:
    """2 N_p FLOP per token × ν tokens/s over the peak."""
    from replicaplan.core.symbols import P_peak

    return model_flops_expression() / P_peak


def kv_cache_expression() -> sp.Expr:
    """M_kv = b n_ctx m_kv: the cache a decode step of b sequences of n_ctx tokens reads."""
    from replicaplan.core.symbols import b, m_kv, n_ctx

    return b * n_ctx * m_kv


def mbu_expression() -> sp.Expr:
    """Bytes read per decode step × steps per second (1/TPOT) over the peak bandwidth."""
    from replicaplan.core.symbols import TPOT, B_peak, M_kv, M_w

    return (M_w + M_kv) / TPOT / B_peak


def step_floor_expression() -> sp.Expr:
    """The shortest decode step the memory allows: the TPOT at which MBU = 1."""
    import sympy as sp

    from replicaplan.core.symbols import TPOT

    (tpot_min,) = sp.solve(sp.Eq(mbu_expression(), 1), TPOT)
    return tpot_min


def kv_bytes_expression() -> sp.Expr:
    """A key and a value (the factor 2) per layer and KV head, d_head values of s_value bytes."""
    from replicaplan.core.symbols import d_head, n_kv, n_layers, s_value

    return 2 * n_layers * n_kv * d_head * s_value


def intensity_expression() -> sp.Expr:
    """I(b): 2 N_p b FLOP over M_w + b n_ctx m_kv bytes."""
    from replicaplan.core.symbols import M_w, N_p, b, m_kv, n_ctx

    return 2 * N_p * b / (M_w + b * n_ctx * m_kv)


def intensity_limit_expression() -> sp.Expr:
    """lim_{b→∞} I(b) = 2 N_p / (n_ctx m_kv)."""
    import sympy as sp

    from replicaplan.core.symbols import b

    return sp.limit(intensity_expression(), b, sp.oo)


def mfu_ceiling_expression() -> sp.Expr:
    """The decode MFU cannot exceed (intensity limit)/(ridge) = lim I / (P_peak/B_peak)."""
    import sympy as sp

    return sp.simplify(intensity_limit_expression() / ridge_expression())


def step_expression() -> sp.Expr:
    """An engine step of b decodes and P prompt tokens (one GPU): floor and per-sequence time,
    the linear layers (the weights' read or their arithmetic, the longer), attention over the C
    tokens of cache (read or arithmetic) and the prompts' attention over A positions."""
    import sympy as sp

    from replicaplan.core.symbols import (
        A_att,
        B_ach,
        C_ctx,
        F_ach,
        M_w,
        N_p,
        P_tok,
        b,
        d_att,
        m_kv,
        t_0,
        t_seq,
    )

    tokens = b + P_tok
    linear = sp.Max(2 * N_p * tokens / F_ach, M_w / B_ach)
    cache_read = C_ctx * sp.Max(m_kv / B_ach, 4 * d_att / F_ach)
    return t_0 + t_seq * b + linear + cache_read + 4 * d_att * A_att / F_ach


def decode_crossover_expression() -> sp.Expr:
    """The batch past which a decode step's linear layers are compute-bound: 2 N_p b/F_ach =
    M_w/B_ach solved for b (M_w F_ach / (2 N_p B_ach), about the ridge times the bytes per
    parameter over 2 when the achieved rates are the peaks')."""
    import sympy as sp

    from replicaplan.core.symbols import B_ach, F_ach, M_w, N_p, b

    (crossover,) = sp.solve(sp.Eq(2 * N_p * b / F_ach, M_w / B_ach), b)
    return crossover


def ridge_expression() -> sp.Expr:
    """The ridge of the roofline: P_peak/B_peak FLOP per byte."""
    from replicaplan.core.symbols import B_peak, P_peak

    return P_peak / B_peak


def ridge_context_expression() -> sp.Expr:
    """Context at which the intensity limit equals the ridge: solve 2N_p/(n m_kv) = P/B for n."""
    import sympy as sp

    from replicaplan.core.symbols import n_ctx

    (n_star,) = sp.solve(sp.Eq(intensity_limit_expression(), ridge_expression()), n_ctx)
    return n_star


def derivations() -> dict:
    """The numeric functions ``core.derived`` holds for this module (see ``tools/derive.py``): each
    built, solved and simplified only here, not when the planner runs."""
    from replicaplan.core.symbols import (
        TPOT,
        B_ach,
        B_peak,
        F_ach,
        M_kv,
        M_w,
        N_p,
        P_peak,
        b,
        d_head,
        m_kv,
        n_ctx,
        n_kv,
        n_layers,
        nu,
        s_value,
    )

    formulas = {
        "roofline_mfu": (mfu_expression, (N_p, nu, P_peak)),
        "roofline_flops": (model_flops_expression, (N_p, nu)),
        "roofline_cache": (kv_cache_expression, (b, n_ctx, m_kv)),
        "roofline_mbu": (mbu_expression, (M_w, M_kv, TPOT, B_peak)),
        "roofline_floor": (step_floor_expression, (M_w, M_kv, B_peak)),
        "roofline_kv": (kv_bytes_expression, (n_layers, n_kv, d_head, s_value)),
        "roofline_intensity": (intensity_expression, (N_p, b, n_ctx, m_kv, M_w)),
        "roofline_limit": (intensity_limit_expression, (N_p, n_ctx, m_kv)),
        "roofline_ridge": (ridge_expression, (P_peak, B_peak)),
        "roofline_ceiling": (mfu_ceiling_expression, (N_p, n_ctx, m_kv, P_peak, B_peak)),
        "roofline_ridge_ctx": (ridge_context_expression, (N_p, m_kv, P_peak, B_peak)),
        "roofline_crossover": (decode_crossover_expression, (M_w, N_p, F_ach, B_ach)),
    }
    return {
        name: (args, build(), "math", f"{build.__name__}()")
        for name, (build, args) in formulas.items()
    }


def mfu(params: float, tokens_per_s: float, peak_flops: float) -> float:
    """MFU = 2 N_p ν / P_peak.

    >>> round(mfu(8e9, 2560, 1e15), 4)
    0.041
    """
    return float(
        derived.roofline_mfu(
            _check.positive("params", params),
            _check.positive("tokens_per_s", tokens_per_s),
            _check.positive("peak_flops", peak_flops),
        )
    )


def model_flops(params: float, tokens_per_s: float) -> float:
    """2 N_p ν: FLOP/s a model generating ``tokens_per_s`` does (the MFU's numerator)."""
    return float(
        derived.roofline_flops(
            _check.positive("params", params), _check.positive("tokens_per_s", tokens_per_s)
        )
    )


def kv_cache_bytes(batch: float, context_tokens: float, kv_bytes_per_token: float) -> float:
    """M_kv = b n_ctx m_kv, bytes of cache a decode step reads.

    >>> kv_cache_bytes(64, 2000, 131072) / 1e9     # the source's "about 16.8 GB"
    16.777216
    """
    return float(
        derived.roofline_cache(
            _check.non_negative("batch", batch),
            _check.non_negative("context_tokens", context_tokens),
            _check.non_negative("kv_bytes_per_token", kv_bytes_per_token),
        )
    )


def mbu(weight_bytes: float, kv_bytes: float, tpot_s: float, peak_bandwidth: float) -> float:
    """MBU = (M_w + M_kv) / TPOT / B_peak.

    >>> round(mbu(16e9, 0.0, 0.025, 3e12), 4)      # the weights alone: 640 GB/s of 3 TB/s
    0.2133
    """
    return float(
        derived.roofline_mbu(
            _check.positive("weight_bytes", weight_bytes),
            _check.non_negative("kv_bytes", kv_bytes),
            _check.positive("tpot_s", tpot_s),
            _check.positive("peak_bandwidth", peak_bandwidth),
        )
    )


def decode_step_floor(weight_bytes: float, kv_bytes: float, peak_bandwidth: float) -> float:
    """(M_w + M_kv) / B_peak: seconds a decode step needs at the peak bandwidth, its floor.

    >>> round(decode_step_floor(16e9, 0.0, 3e12) * 1e3, 2)   # the weights alone: 5.33 ms
    5.33
    """
    return float(
        derived.roofline_floor(
            _check.positive("weight_bytes", weight_bytes),
            _check.non_negative("kv_bytes", kv_bytes),
            _check.positive("peak_bandwidth", peak_bandwidth),
        )
    )


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, bytes_per_value: float) -> float:
    """m_kv = 2 · layers · kv_heads · head_dim · bytes per value.

    >>> kv_bytes_per_token(32, 8, 128, 2) / 1024     # an 8 B model with GQA, bf16: 128 KiB
    128.0
    """
    return float(
        derived.roofline_kv(
            _check.integer("layers", layers, minimum=1),
            _check.integer("kv_heads", kv_heads, minimum=1),
            _check.integer("head_dim", head_dim, minimum=1),
            _check.positive("bytes_per_value", bytes_per_value),
        )
    )


def decode_intensity(
    params: float,
    batch: float,
    context_tokens: float,
    kv_bytes_per_token: float,
    weight_bytes: float,
) -> float:
    """I(b) = 2 N_p b / (M_w + b n_ctx m_kv), FLOP per byte of one decode step."""
    return float(
        derived.roofline_intensity(
            _check.positive("params", params),
            _check.positive("batch", batch),
            _check.non_negative("context_tokens", context_tokens),
            _check.non_negative("kv_bytes_per_token", kv_bytes_per_token),
            _check.positive("weight_bytes", weight_bytes),
        )
    )


def intensity_limit(params: float, context_tokens: float, kv_bytes_per_token: float) -> float:
    """2 N_p / (n_ctx m_kv): the intensity no batch size can exceed."""
    return float(
        derived.roofline_limit(
            _check.positive("params", params),
            _check.positive("context_tokens", context_tokens),
            _check.positive("kv_bytes_per_token", kv_bytes_per_token),
        )
    )


def ridge(peak_flops: float, peak_bandwidth: float) -> float:
    """P_peak / B_peak, FLOP per byte: where the roofline turns from memory- to compute-bound."""
    return float(
        derived.roofline_ridge(
            _check.positive("peak_flops", peak_flops),
            _check.positive("peak_bandwidth", peak_bandwidth),
        )
    )


def decode_mfu_ceiling(
    params: float,
    context_tokens: float,
    kv_bytes_per_token: float,
    peak_flops: float,
    peak_bandwidth: float,
) -> float:
    """The most MFU decode can reach at any batch: min(1, (2 N_p/(n_ctx m_kv)) / (P_peak/B_peak)).

    >>> round(decode_mfu_ceiling(8e9, 2000, 131072, 1e15, 3e12), 3)
    0.183
    """
    value = derived.roofline_ceiling(
        _check.positive("params", params),
        _check.positive("context_tokens", context_tokens),
        _check.positive("kv_bytes_per_token", kv_bytes_per_token),
        _check.positive("peak_flops", peak_flops),
        _check.positive("peak_bandwidth", peak_bandwidth),
    )
    return min(1.0, float(value))


def ridge_context(
    params: float, kv_bytes_per_token: float, peak_flops: float, peak_bandwidth: float
) -> float:
    """n_ctx below which a large batch can bring decode to the ridge: 2 N_p B_peak/(P_peak m_kv)."""
    return float(
        derived.roofline_ridge_ctx(
            _check.positive("params", params),
            _check.positive("kv_bytes_per_token", kv_bytes_per_token),
            _check.positive("peak_flops", peak_flops),
            _check.positive("peak_bandwidth", peak_bandwidth),
        )
    )


def attainable_flops(intensity: float, peak_flops: float, peak_bandwidth: float) -> float:
    """The roofline: min(P_peak, I · B_peak)."""
    return min(
        _check.positive("peak_flops", peak_flops),
        _check.non_negative("intensity", intensity)
        * _check.positive("peak_bandwidth", peak_bandwidth),
    )


def decode_tokens_per_s(
    weight_bytes: float,
    kv_bytes_per_token: float,
    batch: int,
    context_tokens: float,
    mbu_value: float,
    peak_bandwidth: float,
) -> float:
    """Tokens/s at a given MBU: b sequences / TPOT, TPOT = (M_w + b n m_kv)/(MBU · B_peak)."""
    batch = _check.integer("batch", batch, minimum=1)
    mbu_value = _check.fraction("mbu_value", mbu_value)
    step_bytes = _check.positive("weight_bytes", weight_bytes) + batch * _check.non_negative(
        "context_tokens", context_tokens
    ) * _check.non_negative("kv_bytes_per_token", kv_bytes_per_token)
    return batch * mbu_value * _check.positive("peak_bandwidth", peak_bandwidth) / step_bytes


def prefill_intensity(params: float, prompt_tokens: float, weight_bytes: float) -> float:
    """FLOP per byte of a prefill: 2 N_p per prompt token, weights read once (no cache writes)."""
    return (
        2
        * _check.positive("params", params)
        * _check.positive("prompt_tokens", prompt_tokens)
        / _check.positive("weight_bytes", weight_bytes)
    )


def decode_crossover_batch(
    weight_bytes: float, params: float, achieved_flops: float, achieved_bandwidth: float
) -> float:
    """b× = M_w F_ach / (2 N_p B_ach): the decode batch past which a step's linear layers are
    compute-bound (``decode_crossover_expression``).

    >>> round(decode_crossover_batch(8.03e9, 8.03e9, 1979e12 * 0.64, 3.35e12 * 0.7), 1)
    270.1
    """
    return float(
        derived.roofline_crossover(
            _check.positive("weight_bytes", weight_bytes),
            _check.positive("params", params),
            _check.positive("achieved_flops", achieved_flops),
            _check.positive("achieved_bandwidth", achieved_bandwidth),
        )
    )

import numpy as np
import pytest
import sympy as sp

from replicaplan.core import symbols as S
from replicaplan.serving import roofline as rf

M_KV = rf.kv_bytes_per_token(32, 8, 128, 2)


def test_source_numbers():
    assert round(rf.mfu(8e9, 2560, 1e15) * 100, 1) == 4.1
    # the weights alone stream 16 GB every 25 ms step: 640 GB/s, 21 % of 3 TB/s
    assert rf.mbu(16e9, 0, 0.025, 3e12) * 3e12 == pytest.approx(640e9)
    assert round(rf.mbu(16e9, 0, 0.025, 3e12) * 100) == 21
    # the source: 64 sequences of 2,000 tokens hold about 16.8 GB of cache, as much as the weights
    kv = 64 * 2000 * rf.kv_bytes_per_token(32, 8, 128, 2)
    assert kv == pytest.approx(16.8e9, rel=0.01)
    assert rf.mbu(16e9, kv, 0.025, 3e12) == pytest.approx((16e9 + 16.78e9) / 0.025 / 3e12, rel=1e-3)
    assert round(rf.intensity_limit(8e9, 2000, M_KV)) == 61
    assert round(rf.ridge(1e15, 3e12)) == 333
    assert round(rf.intensity_limit(8e9, 2000, M_KV) / rf.ridge(1e15, 3e12) * 100) == 18
    assert rf.ridge_context(8e9, M_KV, 1e15, 3e12) == pytest.approx(366, abs=1)  # "about 370"


def test_symbolic_derivations():
    assert sp.simplify(rf.intensity_limit_expression() - 2 * S.N_p / (S.n_ctx * S.m_kv)) == 0
    assert (
        sp.simplify(rf.ridge_context_expression() - 2 * S.N_p * S.B_peak / (S.P_peak * S.m_kv)) == 0
    )
    assert (
        sp.simplify(
            rf.mfu_ceiling_expression() - 2 * S.N_p * S.B_peak / (S.P_peak * S.n_ctx * S.m_kv)
        )
        == 0
    )
    # Llama-3-8B's shape (32 layers, 8 KV heads of 128 values, bf16): 128 KiB per token
    values = {S.n_layers: 32, S.n_kv: 8, S.d_head: 128, S.s_value: 2}
    assert rf.kv_bytes_expression().subs(values) == 128 * 1024


def test_intensity_rises_with_batch_towards_its_limit():
    values = [rf.decode_intensity(8e9, b, 2000, M_KV, 16e9) for b in (1, 8, 64, 512, 10**6)]
    assert all(a < b for a, b in zip(values, values[1:], strict=False))
    assert values[-1] == pytest.approx(rf.intensity_limit(8e9, 2000, M_KV), rel=1e-3)
    assert rf.decode_intensity(8e9, 1, 0, M_KV, 16e9) == pytest.approx(
        1.0
    )  # 2 FLOP per 2-byte weight


def test_levers_at_constant_mbu():
    base = rf.decode_tokens_per_s(16e9, M_KV, 64, 2000, 0.44, 3e12)
    assert base == pytest.approx(2560, rel=0.02)  # the running example
    int8 = rf.decode_tokens_per_s(8e9, M_KV, 64, 2000, 0.44, 3e12)
    int4 = rf.decode_tokens_per_s(4e9, M_KV, 64, 2000, 0.44, 3e12)
    kv8 = rf.decode_tokens_per_s(16e9, M_KV / 2, 64, 2000, 0.44, 3e12)
    assert base < int8 < int4 and base < kv8
    assert rf.attainable_flops(1000, 1e15, 3e12) == 1e15
    assert rf.attainable_flops(10, 1e15, 3e12) == 3e13


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rf.mfu(0, 1, 1), "params"),
        (lambda: rf.mbu(1, -1, 1, 1), "kv_bytes"),
        (lambda: rf.mbu(1, 0, 1, 0), "peak_bandwidth"),
        (lambda: rf.kv_bytes_per_token(0, 8, 128, 2), "layers"),
        (lambda: rf.decode_intensity(1, 0, 1, 1, 1), "batch"),
        (lambda: rf.ridge(1, -3), "peak_bandwidth"),
        (lambda: rf.decode_tokens_per_s(1, 1, 1, 1, 1.5, 1), "mbu_value"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_decode_mfu_ceiling_is_the_source_figure():
    # the source: intensity limit ≈ 61 FLOP/byte against a ridge of ≈ 333 caps decode MFU at ≈ 18 %
    ceiling = rf.decode_mfu_ceiling(8e9, 2000, 128 * 1024, 1e15, 3e12)
    assert round(ceiling * 100) == 18
    assert ceiling == pytest.approx(
        rf.intensity_limit(8e9, 2000, 128 * 1024) / rf.ridge(1e15, 3e12)
    )
    assert rf.decode_mfu_ceiling(8e9, 10, 128 * 1024, 1e15, 3e12) == 1.0  # short contexts


def test_decode_step_floor_of_the_running_example():
    """16 GB of weights and 64 × 2,000 tokens × 128 KiB of cache at 3 TB/s: about 11 ms."""
    kv = 64 * 2000 * 2 * 32 * 8 * 128 * 2
    floor = rf.decode_step_floor(16e9, kv, 3e12)
    assert floor == pytest.approx((16e9 + 16_777_216_000) / 3e12)  # 10.93 ms
    # at the floor the step reads memory at exactly the peak: MBU = 1
    assert rf.mbu(16e9, kv, floor, 3e12) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="peak_bandwidth"):
        rf.decode_step_floor(16e9, kv, 0)


def test_the_step_the_engine_runs_is_the_derived_expression():
    # the sympy step, evaluated at random points, against ReplicaModel.step_s on one GPU
    import sympy as sp

    from replicaplan.core import symbols as s
    from replicaplan.serving.replica import ReplicaModel
    from replicaplan.serving.roofline import decode_crossover_expression, step_expression

    args = (s.t_0, s.t_seq, s.b, s.P_tok, s.C_ctx, s.A_att, s.N_p, s.M_w, s.m_kv)
    args += (s.F_ach, s.B_ach, s.d_att)
    step = sp.lambdify(args, step_expression(), "math")
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = ReplicaModel(
            weight_bytes=float(rng.uniform(1e9, 2e11)),
            params=float(rng.uniform(1e9, 1e11)),
            kv_bytes_per_token=float(rng.uniform(1e4, 1e6)),
            bandwidth=float(rng.uniform(1e12, 5e12)),
            prefill_flops=float(rng.uniform(1e14, 2e15)),
            step_floor_s=float(rng.uniform(0, 2e-3)),
            seq_step_s=float(rng.uniform(0, 5e-5)),
            attention_width=float(rng.uniform(1e4, 1e6)),
            batch=4096,
            token_budget=8192,
        )
        b, p, c, a = (float(x) for x in rng.integers(0, 4000, 4))
        expected = step(
            m.step_floor_s, m.seq_step_s, b, p, c, a, m.params, m.weight_bytes,
            m.kv_bytes_per_token, m.prefill_flops, m.bandwidth, m.attention_width,
        )  # fmt: skip
        assert float(m.step_s(b, c, p, a)) == pytest.approx(expected, rel=1e-12)
    # the crossover: the arithmetic of b sequences equals the weights' read
    assert sp.simplify(decode_crossover_expression() - s.M_w * s.F_ach / (2 * s.N_p * s.B_ach)) == 0

"""One replica's step model and its fit (serving.replica): the running example's calibration,
datasheet replicas, vLLM's cache profile, and fits that recover known servers."""

import numpy as np
import pytest

from replicaplan.core.promises import Promises
from replicaplan.serving.engine import simulate_closed, simulate_open
from replicaplan.serving.replica import FitNote, ReplicaModel
from replicaplan.serving.trace import Trace


def test_calibration_of_the_running_example():
    m = ReplicaModel()
    assert m.tpot(64) == pytest.approx(0.025)  # 25 ms at 64 sequences
    assert 64 / m.tpot(64) == pytest.approx(2560)  # 2,560 tokens/s
    assert m.max_rate_rps(320) == pytest.approx(8.0)  # μ ≈ 8 req/s
    # each 1,000-token prompt's compute holds up the batch: 32 ms of linear layers (2 × 8e9
    # FLOP a token at 0.5 PFLOP/s) and its attention, each token over the 1 ... 1,000 before it
    # (4 × 32 layers × 4,096 FLOP a pair, 500,500 pairs): 64/(320·0.025 + 64·(0.032 + 0.000525))
    attention = 4 * 32 * 4096 * 500_500 / 0.5e15
    assert attention == pytest.approx(0.000525, rel=1e-3)
    assert m.max_rate_rps(320, 1000) == pytest.approx(64 / (8.0 + 64 * (0.032 + attention)))
    assert m.tpot(1) < m.tpot(32) < m.tpot(64)  # the roofline: more KV, slower
    # weights alone: 16 GB per step at the achieved bandwidth, 43.7 % of the 3 TB/s peak
    assert m.tpot(0) == pytest.approx(16e9 / m.bandwidth)
    assert m.bandwidth / 3e12 == pytest.approx((16e9 + 64 * 2000 * 131072) / 0.025 / 3e12)
    # a lone 1,000-token pass: its arithmetic (32 ms) outlasts the weights' read (12.2 ms)
    assert m.prefill_s(1000) == pytest.approx(2 * 8e9 * 1000 / (0.5 * 1e15) + attention)
    # a 50-token one is the read: 16 GB at the achieved bandwidth, plus its small attention
    assert m.prefill_s(50) == pytest.approx(16e9 / m.bandwidth + 4 * 32 * 4096 * 1275 / 0.5e15)
    # the running example is the datasheet constructor's replica of its 8 B model and GPU
    built = ReplicaModel.from_hardware(
        "example-8b",
        "example",
        batch=64,
        bandwidth_efficiency=m.bandwidth / 3e12,
        prefill_efficiency=0.5,  # the source's; datasheet replicas default to 0.70
        token_budget=2048,
        step_floor_s=0.0,  # the source's step has no floor; datasheet replicas pay one
        seq_step_s=0.0,
    )
    assert built == m


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(batch=0), "batch"),
        (dict(batch=2.5), "batch"),
        (dict(bandwidth=0), "bandwidth"),
        (dict(prefill_flops=-1), "prefill_flops"),
        (dict(kv_bytes_per_token=-1), "kv_bytes"),
        (dict(token_budget=0), "token_budget"),
        (dict(kv_capacity_tokens=0), "kv_capacity_tokens"),
        (dict(step_floor_s=-0.001), "step_floor_s"),
    ],
)
def test_bad_model(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ReplicaModel(**kwargs)


def test_bad_inputs():
    m = ReplicaModel()
    with pytest.raises(ValueError, match="arrival"):
        simulate_open(m, [1.0, 0.5], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="output"):
        simulate_open(m, [0.0, 0.5], [1, 1], [1, 0])
    with pytest.raises(ValueError, match="prompt"):
        simulate_open(m, [0.0, 0.5], [-1, 1], [1, 1])
    with pytest.raises(ValueError, match="users"):
        simulate_closed(m, 0, [0.0], [1], [1])
    with pytest.raises(ValueError, match="ttft_slo_s"):
        Trace(*(np.ones(1),) * 5).meets(Promises(0, 1))


def test_decode_step_reads_the_context_actually_held():
    m = ReplicaModel()
    # one step of 3 sequences holding 100, 2,000 and 9,000 tokens reads 11,100 tokens of cache
    expected = (m.weight_bytes + 11_100 * m.kv_bytes_per_token) / m.bandwidth
    assert m.step_s(3, 11_100) == pytest.approx(expected)
    assert m.step_s(3, 11_100) != pytest.approx(m.tpot(3))  # not 3 × the mean context


def test_from_hardware_on_datasheets():
    # Llama-3-70B in bf16 (141.2 GB) does not fit one 80 GiB A100; on two, each GPU keeps for
    # its cache 0.9 × 80 GiB less half the weights, vLLM's 3.58 GiB of non-torch memory with
    # tensor parallelism and the activations of a 2,048-token profiling step (1.26 GiB for
    # 8,192 tokens of a 4,096-wide model, so 1.26/4 × 8,192/4,096 GiB, split over the two):
    # 2.53 GB a GPU, at 160 KiB a token per GPU (80 layers, 4 of the 8 KV heads of 128)
    with pytest.raises(ValueError, match="gpus"):
        ReplicaModel.from_hardware("llama-3-70b", "a100-80gb")
    two = ReplicaModel.from_hardware("llama-3-70b", "a100-80gb", gpus=2)
    gib = 2**30
    per_gpu = 0.9 * 80 * gib - 141.2e9 / 2 - 3.58 * gib - 1.26 * gib / 4 * 2 / 2
    assert per_gpu == pytest.approx(2.53e9, rel=2e-3)
    assert two.kv_bytes_per_token == 2 * 80 * 8 * 128 * 2
    assert two.kv_capacity_tokens == (2 * per_gpu) // (2 * 80 * 8 * 128 * 2)
    assert two.batch == 256 and two.token_budget == 2048  # vLLM's defaults on an A100
    assert two.prefill_flops == pytest.approx(2 * 312e12 * 0.70)
    assert two.bandwidth == pytest.approx(2 * 2.039e12 * 0.75)
    # two all-reduces per layer: 2 × 80 × (45 µs + 2·(1/2)·8192·2 bytes·T / 300 GB/s)
    assert two.comm_fixed_s == pytest.approx(2 * 80 * 45e-6)
    assert two.comm_per_sequence_s == pytest.approx(2 * 80 * 8192 * 2 / 300e9)
    one = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb", step_floor_s=0, seq_step_s=0)
    assert one.comm_fixed_s == 0 and one.step_s(1, 0) == pytest.approx(16.06e9 / (0.75 * 2.039e12))
    # vLLM V1's defaults on the large cards: 1,024 sequences and 8,192 tokens a step
    h100 = ReplicaModel.from_hardware("llama-3-8b", "h100-sxm")
    assert (h100.batch, h100.token_budget) == (1024, 8192)


def test_the_cache_as_vllm_profiles_it():
    # vLLM's own memory profile of Llama-3-8B on one H100 (PR #10511): 0.90 × 79.22 GiB =
    # 71.29 GiB; weights 14.96 GiB, non-torch 1.79 GiB, activation peak 1.26 GiB (8,192 tokens);
    # 53.29 GiB left for the cache. On two GPUs: 7.48 GiB of weights and 3.58 of non-torch each
    from replicaplan.serving.catalogue import GPUS, MODELS
    from replicaplan.serving.replica import kv_cache_bytes_per_gpu

    shape, h100 = MODELS["llama-3-8b"], GPUS["h100-sxm"]
    one = kv_cache_bytes_per_gpu(shape, h100, 1, 0.9, 8192) / 2**30
    assert one == pytest.approx(53.29, abs=0.01)
    two = kv_cache_bytes_per_gpu(shape, h100, 2, 0.9, 8192) / 2**30
    assert two == pytest.approx(71.29 - 7.48 - 3.58 - 1.26 / 2, abs=0.01)
    # FP8 weights and cache: half the weights' bytes, twice the tokens per byte
    bf16 = ReplicaModel.from_hardware("llama-3-8b", "h100-sxm")
    fp8 = ReplicaModel.from_hardware("llama-3-8b", "h100-sxm", dtype="fp8")
    assert fp8.weight_bytes == bf16.weight_bytes / 2
    assert fp8.kv_bytes_per_token == bf16.kv_bytes_per_token / 2
    assert fp8.prefill_flops == pytest.approx(1979e12 * 0.70)  # the H100's FP8 tensor cores
    # an A100 has none: FP8 weights are stored in 8 bits and multiplied at the 16-bit rate
    a100 = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb", dtype="fp8")
    assert a100.prefill_flops == pytest.approx(312e12 * 0.70)
    with pytest.raises(ValueError, match="dtype"):
        ReplicaModel.from_hardware("llama-3-8b", "h100-sxm", dtype="int3")


def test_decode_turns_compute_bound_past_the_ridge():
    # Llama-3-8B in FP8 on an H100: a step's linear layers read 8.03 GB (3.20 ms at 2.51 TB/s)
    # or compute 2 × 8.03e9 FLOP a token at 1,385 TFLOP/s (11.6 µs): the arithmetic wins past
    # 276 sequences, and from there a step grows by 11.6 µs a sequence whatever the bandwidth,
    # which is why an H200 (4.8 TB/s) decodes large batches no faster than an H100
    h100 = ReplicaModel.from_hardware("llama-3-8b", "h100-sxm", dtype="fp8", seq_step_s=0.0)
    h200 = ReplicaModel.from_hardware("llama-3-8b", "h200-sxm", dtype="fp8", seq_step_s=0.0)
    read = 8.03e9 / (3.35e12 * 0.75)
    per_token = 2 * 8.03e9 / (1979e12 * 0.70)
    assert read / per_token == pytest.approx(275.69, rel=1e-3)
    for b in (512, 1024):
        assert float(h100.step_s(b, 0)) == pytest.approx(h100.step_floor_s + b * per_token)
        assert float(h200.step_s(b, 0)) == pytest.approx(float(h100.step_s(b, 0)))
    assert float(h200.step_s(16, 0)) < float(h100.step_s(16, 0))  # memory-bound: H200 wins


def test_fit_recovers_a_known_server():
    true = ReplicaModel.from_hardware(
        "llama-3-8b", "a100-80gb", step_floor_s=0.004, prefill_floor_s=0.02, seq_step_s=0.0
    )
    # decode steps below the compute-bound batch, prompts long enough to be compute-bound
    tpot = [(b, 1000, float(true.step_s(b, b * 1000))) for b in (1, 16, 64)]
    ttft = [(p, float(true.prefill_pass_s(p))) for p in (1024, 2048, 4096)]
    with pytest.warns(FitNote, match="t_seq cannot be told"):  # one context: no t_seq
        fitted = ReplicaModel.fit("llama-3-8b", tpot=tpot, ttft=ttft)
    assert fitted.seq_step_s == 0
    assert fitted.step_floor_s == pytest.approx(0.004, rel=1e-6)
    assert fitted.bandwidth == pytest.approx(true.bandwidth, rel=1e-6)
    assert fitted.prefill_floor_s == pytest.approx(0.02, rel=1e-6)
    assert fitted.prefill_flops == pytest.approx(true.prefill_flops, rel=1e-6)


# Llama-3-8B by hand: 8.03e9 params x 2 bytes; 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes
L3_WEIGHTS, L3_KV = 16.06e9, 32 * 8 * 128 * 2 * 2


def three_term_step(b, ctx, floor=0.003, bandwidth=1.5e12, t_seq=40e-6):
    """A known server's step, written out: floor + bytes/bandwidth + b t_seq."""
    return floor + (L3_WEIGHTS + b * ctx * L3_KV) / bandwidth + b * t_seq


def known_prefill(p, floor=0.01, flops=2e14):
    """A known server's prefill pass: floor + (2 N_p p + 4 d_att p(p + 1)/2) / FLOP/s, d_att =
    32 layers × 4,096 for Llama-3-8B."""
    return floor + (2 * 8.03e9 * p + 2 * 32 * 4096 * p * (p + 1)) / flops


def test_fit_recovers_three_terms_from_a_grid():
    grid = [(b, c, three_term_step(b, c)) for b in (1, 8, 32, 128) for c in (256, 1024, 4096)]
    ttft = [(p, known_prefill(p)) for p in (256, 1024, 4000)]
    fitted, notes = ReplicaModel.fit_notes("llama-3-8b", tpot=grid, ttft=ttft)
    assert notes == []
    assert fitted.step_floor_s == pytest.approx(0.003, rel=1e-6)
    assert fitted.bandwidth == pytest.approx(1.5e12, rel=1e-6)
    assert fitted.seq_step_s == pytest.approx(40e-6, rel=1e-6)
    assert fitted.prefill_floor_s == pytest.approx(0.01, rel=1e-6)
    assert fitted.prefill_flops == pytest.approx(2e14, rel=1e-6)
    # and the model steps as the server did, off the grid too
    assert float(fitted.step_s(50, 50 * 3000)) == pytest.approx(three_term_step(50, 3000))


def test_a_floor_within_noise_of_zero_is_clamped_with_a_note():
    # a server without a floor, timed with 1 % noise: the floor comes out slightly negative
    # (-4.8 µs against a standard error of 55 µs with this seed), which the two-term fit of
    # the past refused outright
    rng = np.random.default_rng(0)
    grid = [(b, c) for b in (1, 8, 32, 128) for c in (256, 1024, 4096)]
    noise = 1 + 0.01 * rng.standard_normal(len(grid))
    tpot = [
        (b, c, three_term_step(b, c, floor=0.0) * z) for (b, c), z in zip(grid, noise, strict=True)
    ]
    ttft = [(p, known_prefill(p, floor=0.0)) for p in (256, 1024, 4000)]
    fitted, notes = ReplicaModel.fit_notes("llama-3-8b", tpot=tpot, ttft=ttft)
    assert len(notes) == 1 and "step floor" in notes[0] and "within noise" in notes[0]
    assert fitted.step_floor_s == 0 and fitted.prefill_floor_s == pytest.approx(0, abs=1e-12)
    assert fitted.bandwidth == pytest.approx(1.5e12, rel=0.02)
    assert fitted.seq_step_s == pytest.approx(40e-6, rel=0.1)


def test_a_negative_floor_beyond_the_noise_is_refused():
    # exact measurements of a line through a negative floor: no noise can explain it
    tpot = [(b, c, three_term_step(b, c, floor=-0.002)) for b in (1, 8, 32) for c in (256, 4096)]
    with pytest.raises(ValueError, match="negative step floor"):
        ReplicaModel.fit_notes("llama-3-8b", tpot=tpot, ttft=[(100, 0.1), (200, 0.2)])


@pytest.mark.parametrize(
    "tpot, ttft, name",
    [
        ([(1, 1000, 0.01)], [(100, 0.1), (200, 0.2)], "two or more"),
        ([(1, 1000, 0.01), (8, 1000, 0.02)], [(100, 0.1)], "two or more"),
        ([(1, 0, 0.02), (64, 2000, 0.01)], [(100, 0.1), (200, 0.2)], "bandwidth"),
        ([(1, 0, 0.001), (64, 2000, 0.03)], [(100, 0.1), (200, 0.2)], "negative step floor"),
        ([(1, 0, 0.012), (64, 2000, 0.018)], [(100, 0.2), (1000, 0.1)], "FLOP"),
    ],
)
def test_fit_bad_measurements(tpot, ttft, name):
    with pytest.raises(ValueError, match=name):
        ReplicaModel.fit("llama-3-8b", tpot=tpot, ttft=ttft)

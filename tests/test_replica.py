import numpy as np
import pytest
from replica_simpy import simpy_closed, simpy_open

from replicaplan.serving.engine import simulate_closed, simulate_open
from replicaplan.serving.replica import FitNote, ReplicaModel
from replicaplan.serving.trace import Trace
from replicaplan.traffic.loadgen import AZURE_CONVERSATION, poisson_arrivals, think_times


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


MODES = {"chunked": True, "separate passes": False}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rate, batch", [(3.0, 64), (7.5, 64), (9.0, 64), (2.0, 4), (40.0, 1)])
def test_open_loop_matches_simpy(rate, batch, mode):
    rng = np.random.default_rng(11)
    n = 300
    arrival = poisson_arrivals(rate, n, rng)
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    output = np.minimum(output, 120)  # keep the simpy run short
    model = ReplicaModel(batch=batch, chunked_prefill=MODES[mode])
    fast = simulate_open(model, arrival, prompt, output)
    a, first, end, preempted = simpy_open(model, arrival, prompt, output)
    np.testing.assert_allclose(fast.arrival, a, rtol=1e-12)
    np.testing.assert_allclose(fast.first_token, first, rtol=1e-9)
    np.testing.assert_allclose(fast.end, end, rtol=1e-9)
    np.testing.assert_array_equal(fast.preemptions, preempted)


# a small cache (preemptions), a small token budget (several passes), floors, tensor parallelism
SERVERS = {
    "tight cache": dict(kv_capacity_tokens=6000, batch=16),
    "small budget": dict(token_budget=600, step_floor_s=0.004, prefill_floor_s=0.01),
    "two gpus": dict(comm_fixed_s=0.0016, comm_per_sequence_s=2e-5, batch=32),
    "prefix cache": dict(prefix_hit=0.6, token_budget=256),
    "no watermark": dict(kv_capacity_tokens=6000, batch=16, watermark=0.0),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("server", SERVERS)
def test_engine_rules_match_simpy(server, mode):
    rng = np.random.default_rng(21)
    n = 250
    arrival = poisson_arrivals(6.0, n, rng)
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    output = np.minimum(output, 150)
    model = ReplicaModel(**SERVERS[server], chunked_prefill=MODES[mode])
    fast = simulate_open(model, arrival, prompt, output)
    a, first, end, preempted = simpy_open(model, arrival, prompt, output)
    np.testing.assert_allclose(fast.first_token, first, rtol=1e-9)
    np.testing.assert_allclose(fast.end, end, rtol=1e-9)
    np.testing.assert_array_equal(fast.preemptions, preempted)
    if server in ("tight cache", "no watermark"):
        assert fast.preemptions.sum() > 0  # the case exercises preemption


@pytest.mark.parametrize("mode", MODES)
def test_closed_loop_matches_simpy(mode):
    rng = np.random.default_rng(5)
    n, users = 400, 12
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    output = np.minimum(output, 100)
    think = think_times(0.5, n, rng)
    start = rng.uniform(0, 1, users)
    model = ReplicaModel(batch=8, chunked_prefill=MODES[mode])
    fast = simulate_closed(model, users, think, prompt, output, start_s=start)
    a, first, end, _ = simpy_closed(model, users, think, prompt, output, start)
    np.testing.assert_allclose(fast.arrival, a, rtol=1e-9)
    np.testing.assert_allclose(fast.first_token, first, rtol=1e-9)
    np.testing.assert_allclose(fast.end, end, rtol=1e-9)


def test_closed_loop_never_exceeds_its_population():
    rng = np.random.default_rng(2)
    n, users = 2000, 10
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    tr = simulate_closed(ReplicaModel(batch=4), users, think_times(1.0, n, rng), prompt, output)
    events = np.concatenate([np.c_[tr.arrival, np.ones(n)], np.c_[tr.end, -np.ones(n)]])
    events = events[np.lexsort((events[:, 1], events[:, 0]))]
    assert np.cumsum(events[:, 1]).max() <= users


def test_fifo_and_causality():
    rng = np.random.default_rng(4)
    arrival = poisson_arrivals(9.0, 2000, rng)
    prompt, output = AZURE_CONVERSATION.sample(2000, rng)
    tr = simulate_open(ReplicaModel(), arrival, prompt, output)
    assert np.all(tr.first_token >= tr.arrival) and np.all(tr.end >= tr.first_token)
    assert np.all(np.diff(tr.first_token) >= 0)  # FIFO admission
    assert np.all(tr.tpot >= ReplicaModel().tpot(1) - 1e-12)


def test_trace_metrics():
    tr = Trace(
        np.array([0.0, 1.0]),
        np.array([0.5, 1.2]),
        np.array([2.5, 1.2]),
        np.array([10, 10]),
        np.array([5, 1]),
    )
    np.testing.assert_allclose(tr.ttft, [0.5, 0.2])
    np.testing.assert_allclose(tr.tpot, [0.5, 0.0])
    np.testing.assert_allclose(tr.latency, [2.5, 0.2])
    assert list(tr.meets(0.4, 1.0)) == [False, True]
    assert tr.window(1).arrival.tolist() == [1.0]


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
        Trace(*(np.ones(1),) * 5).meets(0, 1)


# ---------------------------------------------------------------- cases worked out by hand

# every pass lasts exactly 1 s: floors of 1 s, weights and compute that cost nothing
UNIT = dict(
    weight_bytes=1.0,
    kv_bytes_per_token=0.0,
    bandwidth=1e300,
    params=1e-300,
    prefill_flops=1.0,
    step_floor_s=1.0,
    prefill_floor_s=1.0,
    batch=4,
    token_budget=100,
    chunked_prefill=False,
    attention_width=0.0,
)
# the same with chunked prefill: every step, whatever it carries, lasts 1 s
CHUNKED = {**UNIT, "chunked_prefill": True, "prefill_floor_s": 0.0}


def test_floor_only_passes():
    # one prefill pass (1 s) then three decode steps (1 s each) for a 4-token answer
    tr = simulate_open(ReplicaModel(**UNIT), [0.0], [10], [4])
    assert tr.first_token.tolist() == [1.0] and tr.end.tolist() == [4.0]
    assert tr.tpot.tolist() == [1.0]


def test_a_preemption_written_out():
    # cache of 12 tokens; A and B (4-token prompts, 4-token answers) arrive together.
    # t=1: one pass admits both (cache 4+4 prompt + 2 new tokens = 10); t=2: one step (12).
    # The next step would need 14: B, the newest, is preempted (cache back to 6).
    # B's recompute needs 4 + 2 tokens + 1: 13 > 12, so A decodes alone: t=3, t=4 (A done,
    # cache 0). t=5: B's pass over 6 tokens; t=6: its last token.
    model = ReplicaModel(**UNIT, kv_capacity_tokens=12)
    tr = simulate_open(model, [0.0, 0.0], [4, 4], [4, 4])
    assert tr.first_token.tolist() == [1.0, 1.0]
    assert tr.end.tolist() == [4.0, 6.0]
    assert tr.preemptions.tolist() == [0, 1]


def test_the_cache_bounds_the_batch():
    # six requests of 10-token prompts and 2-token answers, a batch of 8, a cache of 25 tokens:
    # a pass admits two (10 + 1 + 10 + 1 = 22; a third would need 33), their one decode step
    # fits (24), and the next two follow. Without the cache limit all six go in one pass.
    bounded = ReplicaModel(**{**UNIT, "batch": 8}, kv_capacity_tokens=25)
    tr = simulate_open(bounded, [0.0] * 6, [10] * 6, [2] * 6)
    assert tr.first_token.tolist() == [1.0, 1.0, 3.0, 3.0, 5.0, 5.0]
    assert tr.end.tolist() == [2.0, 2.0, 4.0, 4.0, 6.0, 6.0]
    free = simulate_open(ReplicaModel(**{**UNIT, "batch": 8}), [0.0] * 6, [10] * 6, [2] * 6)
    assert free.end.tolist() == [2.0] * 6


def test_a_request_longer_than_the_cache_is_rejected_and_counted():
    model = ReplicaModel(**UNIT, kv_capacity_tokens=12)
    tr = simulate_open(model, [0.0, 0.5], [10, 4], [5, 4])
    assert tr.rejected.tolist() == [True, False]
    assert tr.meets(100.0, 100.0).tolist() == [False, True]
    # the other is served as if alone: its pass ends at 1.5, its three steps at 4.5
    assert tr.first_token[1] == 1.5 and tr.end[1] == 4.5


def test_the_token_budget_splits_prefill_passes():
    prompts = [60, 60, 60]
    small = simulate_open(ReplicaModel(**UNIT), [0.0] * 3, prompts, [2] * 3)
    assert small.first_token.tolist() == [1.0, 2.0, 3.0]  # 60 + 60 > 100: one a pass
    large = simulate_open(
        ReplicaModel(**{**UNIT, "token_budget": 200}), [0.0] * 3, prompts, [2] * 3
    )
    assert large.first_token.tolist() == [1.0, 1.0, 1.0]


def test_a_long_prompt_is_cut_into_chunks_of_the_budget():
    # a 250-token prompt under a budget of 100: chunks of 100, 100 and 50 in steps ending at
    # 1, 2, 3 s; the third samples the first token, two decode steps follow (4 and 5 s)
    tr = simulate_open(ReplicaModel(**CHUNKED), [0.0], [250], [3])
    assert tr.first_token.tolist() == [3.0] and tr.end.tolist() == [5.0]


def test_decodes_go_first_and_prompts_take_what_is_left_of_the_budget():
    # A (10-token prompt, 5 tokens) is prefilled in the step ending at 1 s; B (150 tokens, 2)
    # arrived at 0.5 s. Step 2 carries A's decode and 99 of B's tokens, step 3 A's decode and
    # B's last 51 (B's first token at 3 s), step 4 both decodes (B done), step 5 A's last.
    tr = simulate_open(ReplicaModel(**CHUNKED), [0.0, 0.5], [10, 150], [5, 2])
    assert tr.first_token.tolist() == [1.0, 3.0]
    assert tr.end.tolist() == [5.0, 4.0]
    # in separate passes B's prefill pass (1 to 2 s) stalls A instead: A's tokens at 1, 3, 4,
    # 5, 6 s, B's at 2 and 3 s
    apart = simulate_open(ReplicaModel(**UNIT), [0.0, 0.5], [10, 150], [5, 2])
    assert apart.first_token.tolist() == [1.0, 2.0]
    assert apart.end.tolist() == [6.0, 3.0]


def test_a_chunked_step_costs_its_bytes_and_its_prompt_compute():
    m = ReplicaModel()
    # 10 decodes holding 20,000 tokens plus a 500-token chunk (positions 301 to 800) of a
    # prompt whose 800 tokens are already counted in the cache: the linear layers over 510
    # tokens take 16.3 ms of arithmetic (2 × 8e9 × 510 FLOP at 0.5 PFLOP/s), longer than the
    # 12.2 ms read of 16 GB at 1.31 TB/s; then the cache's read, then the chunk's attention
    linear_s = 2 * 8e9 * 510 / 0.5e15
    assert linear_s > 16e9 / m.bandwidth
    cache_s = 20_800 * 131_072 / m.bandwidth
    positions = sum(range(301, 801))
    attention_s = 4 * 32 * 4096 * positions / 0.5e15
    assert m.step_s(10, 20_800, 500, positions) == pytest.approx(linear_s + cache_s + attention_s)
    # an idle replica's first token, one chunk of 800: the arithmetic of 800 tokens, the
    # prompt's own cache, its attention over positions 1 to 800
    tr = simulate_open(m, [0.0], [800], [2])
    expected = (2 * 8e9 * 800 + 4 * 32 * 4096 * 320_400) / 0.5e15 + 800 * 131_072 / m.bandwidth
    assert tr.first_token[0] == pytest.approx(expected)


def test_the_watermark_stops_the_evict_and_recompute_loop():
    # 70B-like tight cache past saturation: admitting a prompt that leaves no room for the
    # next step evicts the newest again and again; a 1 % watermark (vLLM's) keeps room
    rng = np.random.default_rng(3)
    n = 1500
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    arrival = poisson_arrivals(30.0, n, rng)
    runs = {
        w: simulate_open(
            ReplicaModel(kv_capacity_tokens=40_000, watermark=w), arrival, prompt, output
        )
        for w in (0.0, 0.01)
    }
    without, with_ = (int(runs[w].preemptions.sum()) for w in (0.0, 0.01))
    assert without > 5 * max(with_, 1)


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


def test_hardware_from_text_by_name_or_spelled_out():
    """The catalogue parses its own specs; errors name the kind and key, not a CLI option."""
    from replicaplan.serving.catalogue import GPUS, from_text

    assert from_text("gpu", "a100-80gb") is GPUS["a100-80gb"]
    spelled = from_text("gpu", "memory_bytes=80e9,bandwidth=2e12,flops=3e14,link_bandwidth=3e11")
    assert (spelled.memory_bytes, spelled.bandwidth, spelled.flops) == (80e9, 2e12, 3e14)
    for text, match in [
        ("a100", "^gpu: unknown name 'a100'"),
        ("memory_bytes=-1", "^gpu: memory_bytes must be a finite number > 0"),
        ("memory_bytes=80e9,bandwidth=x", "^gpu: bandwidth must be a finite number > 0"),
        ("memory_bytes=inf", "^gpu: memory_bytes must be a finite number > 0, got 'inf'"),
        ("speed=1", "^gpu: unknown key 'speed'"),
    ]:
        with pytest.raises(ValueError, match=match):
            from_text("gpu", text)
    # a count is a whole number: a fractional or overflowing layer count is refused, not cut
    base = "params=8e9,kv_heads=8,head_dim=128,hidden=4096"
    for layers, match in [
        ("32.5", "layers must be a whole number"),
        ("1e300", "layers must be a whole"),
    ]:
        with pytest.raises(ValueError, match=f"^model: {match}"):
            from_text("model", f"{base},layers={layers}")
    assert from_text("model", f"{base},layers=32.0").layers == 32

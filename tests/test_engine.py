"""The continuous-batching engine (serving.engine): against the simpy reference replica, and
its rules (FIFO, the cache, the token budget, preemption) worked by hand."""

import numpy as np
import pytest
from replica_simpy import simpy_closed, simpy_open

from replicaplan.core.promises import Promises
from replicaplan.serving.engine import simulate_closed, simulate_open
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic.loadgen import AZURE_CONVERSATION, poisson_arrivals, think_times

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
    # Mixtral's shape on a small GPU budget: a step's weights read grows with its tokens
    "mixture of experts": dict(
        weight_bytes=93.4e9,
        expert_bytes=90.2e9,
        experts=8,
        experts_per_token=2,
        params=12.88e9,
        bandwidth=6e12,
        batch=32,
    ),  # fmt: skip
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
    assert tr.meets(Promises(100.0, 100.0)).tolist() == [False, True]
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

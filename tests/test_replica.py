import numpy as np
import pytest
from replica_simpy import simpy_closed, simpy_open

from replicaplan.loadgen import AZURE_CONVERSATION, poisson_arrivals, think_times
from replicaplan.replica import ReplicaModel, Trace, simulate_closed, simulate_open


def test_calibration_of_the_running_example():
    m = ReplicaModel()
    assert m.tpot(64) == pytest.approx(0.025)  # 25 ms at 64 sequences
    assert 64 / m.tpot(64) == pytest.approx(2560)  # 2,560 tokens/s
    assert m.raw_capacity_rps(320) == pytest.approx(8.0)  # μ ≈ 8 req/s
    assert m.tpot(1) < m.tpot(32) < m.tpot(64)  # the roofline: more KV, slower
    # weights alone: 16 GB per step at B_eff
    assert m.tpot(0) == pytest.approx(16e9 / m.effective_bandwidth)
    assert m.prefill_s(1000) == pytest.approx(2 * 8e9 * 1000 / (0.5 * 1e15))


@pytest.mark.parametrize("rate, batch", [(3.0, 64), (7.5, 64), (9.0, 64), (2.0, 4), (40.0, 1)])
def test_open_loop_matches_simpy(rate, batch):
    rng = np.random.default_rng(11)
    n = 300
    arrival = poisson_arrivals(rate, n, rng)
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    output = np.minimum(output, 120)  # keep the simpy run short
    model = ReplicaModel(batch=batch)
    fast = simulate_open(model, arrival, prompt, output)
    a, first, end = simpy_open(model, arrival, prompt, output)
    np.testing.assert_allclose(fast.arrival, a, rtol=1e-12)
    np.testing.assert_allclose(fast.first_token, first, rtol=1e-9)
    np.testing.assert_allclose(fast.end, end, rtol=1e-9)


def test_closed_loop_matches_simpy():
    rng = np.random.default_rng(5)
    n, users = 400, 12
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    output = np.minimum(output, 100)
    think = think_times(0.5, n, rng)
    start = rng.uniform(0, 1, users)
    model = ReplicaModel(batch=8)
    fast = simulate_closed(model, users, think, prompt, output, start_s=start)
    a, first, end = simpy_closed(model, users, think, prompt, output, start)
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


def test_reproducible_bit_for_bit():
    def run():
        rng = np.random.default_rng(8)
        arrival = poisson_arrivals(7.0, 1000, rng)
        prompt, output = AZURE_CONVERSATION.sample(1000, rng)
        return simulate_open(ReplicaModel(), arrival, prompt, output)

    a, b = run(), run()
    assert np.array_equal(a.end, b.end) and np.array_equal(a.first_token, b.first_token)


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
        (dict(tpot_full_s=0), "tpot_full_s"),
        (dict(prefill_efficiency=1.5), "prefill_efficiency"),
        (dict(kv_bytes_per_token=-1), "kv_bytes"),
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

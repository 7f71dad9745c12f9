from pathlib import Path

import numpy as np
import pytest

from replicaplan.core.promises import Promises
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic import loadgen as lg
from replicaplan.traffic import logs

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "azure-llm-inference-2023"


CONV = DATA / "AzureLLMInferenceTrace_conv.csv"


needs_data = pytest.mark.skipif(
    not CONV.exists(), reason="the full Azure trace is not beside the repo (optional check)"
)


SAMPLE = Path(__file__).resolve().parents[1] / "data" / "azure-llm-inference-2023"


def _ranks(x):
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    r[order] = np.arange(len(x))
    _, inv, cnt = np.unique(x, return_inverse=True, return_counts=True)
    return (np.bincount(inv, weights=r) / cnt)[inv]


def spearman(a, b):
    return float(np.corrcoef(_ranks(a), _ranks(b))[0, 1])


@pytest.fixture(scope="module")
def conv():
    return logs.read_trace(CONV)


@needs_data
def test_carried_figures_match_the_raw_trace(conv):
    assert conv.prompt.size == 19366
    probs = np.array(lg.TRACE_PROBS) * 100
    np.testing.assert_allclose(
        np.percentile(conv.prompt, probs), lg.TRACE_PROMPT_QUANTILES, atol=0.05
    )
    np.testing.assert_allclose(
        np.percentile(conv.output, probs), lg.TRACE_OUTPUT_QUANTILES, atol=0.05
    )
    assert spearman(conv.prompt, conv.output) == pytest.approx(lg.TRACE_SPEARMAN, abs=5e-5)
    assert conv.prompt.size / conv.arrival[-1] == pytest.approx(lg.TRACE_RATE_RPS, abs=0.005)


@needs_data
def test_sampled_mix_resembles_the_trace(conv):
    p, o = lg.AZURE_CONVERSATION.sample(50_000, np.random.default_rng(0))
    for q in (10, 25, 50, 75, 90):
        assert np.percentile(p, q) == pytest.approx(np.percentile(conv.prompt, q), rel=0.06)
        assert np.percentile(o, q) == pytest.approx(np.percentile(conv.output, q), rel=0.06)
    assert p.mean() == pytest.approx(conv.prompt.mean(), rel=0.03)
    assert o.mean() == pytest.approx(conv.output.mean(), rel=0.03)
    assert spearman(p, o) == pytest.approx(lg.TRACE_SPEARMAN, abs=0.02)


def test_copula_carries_a_strong_correlation_too():
    mix = lg.LengthMix(lg.TRACE_PROBS, lg.TRACE_PROMPT_QUANTILES, lg.TRACE_OUTPUT_QUANTILES, 0.6)
    p, o = mix.sample(20_000, np.random.default_rng(1))
    assert spearman(p, o) == pytest.approx(0.6, abs=0.03)


def test_identical_requests():
    p, o = lg.identical(5, 1162.4, 210.4)
    assert p.tolist() == [1162] * 5 and o.tolist() == [210] * 5


def test_poisson_and_gamma_rates():
    rng = np.random.default_rng(3)
    for arr in (lg.poisson_arrivals(5.0, 50_000, rng), lg.gamma_arrivals(5.0, 3.0, 50_000, rng)):
        assert arr.size / arr[-1] == pytest.approx(5.0, rel=0.05)
        assert np.all(np.diff(arr) >= 0)
    gaps = np.diff(lg.gamma_arrivals(5.0, 3.0, 100_000, rng))
    assert gaps.std() / gaps.mean() == pytest.approx(3.0, rel=0.05)
    gaps = np.diff(lg.poisson_arrivals(5.0, 100_000, rng))
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.03)


def test_ranks_average_ties():
    assert lg._ranks(np.array([10, 20, 20, 5])).tolist() == [2.0, 3.5, 3.5, 1.0]


@pytest.mark.parametrize(
    "x",
    [
        np.random.default_rng(1).integers(0, 40, 300).astype(float),  # counted
        np.random.default_rng(2).integers(0, 4, 50).astype(float) * 2.5,  # halves: sorted
        np.random.default_rng(3).integers(-5, 5, 80).astype(float),  # negatives: sorted
        np.array([0.0, 2e7, 2e7, 3.0]),  # beyond MAX_TOKENS: sorted
        np.array([7.0]),
    ],
)
def test_ranks_follow_their_definition(x):
    """Rank of x_i = 1 + #{x_j < x_i} + (#{x_j = x_i} − 1)/2, counted pair by pair, on
    whole token counts (counted in one pass) and on values the counting path must leave to
    the sort."""
    below = (x[None, :] < x[:, None]).sum(axis=1)
    equal = (x[None, :] == x[:, None]).sum(axis=1)
    assert lg._ranks(x).tolist() == (1 + below + (equal - 1) / 2).tolist()


def test_length_mix_from_lengths_recovers_the_mix_it_was_drawn_from():
    p, o = lg.AZURE_CONVERSATION.sample(200_000, np.random.default_rng(0))
    fitted = lg.LengthMix.from_lengths(p, o)
    truth = lg.AZURE_CONVERSATION
    for got, want in (
        (fitted.prompt_quantiles, truth.prompt_quantiles),
        (fitted.output_quantiles, truth.output_quantiles),
    ):
        inner = slice(1, -1)  # the extreme quantiles of a sample are its min and max
        assert np.allclose(got[inner], want[inner], rtol=0.03, atol=2)
    # the copula and the integer rounding lower the rank correlation a little
    assert fitted.spearman == pytest.approx(truth.spearman, abs=0.01)


def test_spearman_of_monotone_lengths():
    x = np.arange(1, 101)
    assert lg.LengthMix.from_lengths(x, 2 * x).spearman == pytest.approx(1.0)
    assert lg.LengthMix.from_lengths(x, x[::-1]).spearman == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="at least 2"):
        lg.LengthMix.from_lengths([1], [1])
    with pytest.raises(ValueError, match=">= 0"):
        lg.LengthMix.from_lengths([1, -2], [1, 1])


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: lg.poisson_arrivals(0, 10, np.random.default_rng()), "rate"),
        (lambda: lg.poisson_arrivals(-1, 10, np.random.default_rng()), "rate"),
        (lambda: lg.gamma_arrivals(1, 0, 10, np.random.default_rng()), "cv"),
        (lambda: lg.think_times(-1, 10, np.random.default_rng()), "mean_s"),
        (lambda: lg.identical(0, 1, 1), "n"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_carried_quantiles_describe_the_vendored_sample(sample):
    # if the table of quantiles in loadgen were wrong, the share of the sample below each carried
    # quantile would miss its probability by many binomial standard errors
    probs = np.array(lg.TRACE_PROBS)
    inner = (probs > 0.005) & (probs < 0.995)
    n = sample.prompt.size
    for lengths, quantiles in (
        (sample.prompt, lg.TRACE_PROMPT_QUANTILES),
        (sample.output, lg.TRACE_OUTPUT_QUANTILES),
    ):
        below = np.array([(lengths <= q).mean() for q in quantiles])[inner]
        se = np.sqrt(probs[inner] * (1 - probs[inner]) / n)
        assert np.all(np.abs(below - probs[inner]) < 4 * se)
    assert spearman(sample.prompt, sample.output) == pytest.approx(
        lg.TRACE_SPEARMAN, abs=3 / np.sqrt(n)
    )
    assert sample.prompt.size / sample.arrival[-1] == pytest.approx(lg.TRACE_RATE_RPS / 6, rel=0.02)


def test_the_sample_replays_through_the_replica(sample):
    from replicaplan.serving.engine import simulate_open

    trace = simulate_open(ReplicaModel(), sample.arrival, sample.prompt, sample.output)
    assert trace.arrival.size == sample.prompt.size
    assert np.all(trace.first_token >= trace.arrival) and np.all(trace.end >= trace.first_token)
    # under 1 req/s on a replica that holds about 8, nearly every request meets its promises
    assert trace.meets(Promises(1.0, 0.05)).mean() > 0.95


def test_the_vendored_sample_has_the_full_traces_mix_and_a_sixth_of_its_rate(sample):
    """Every 6th request of the conversation trace: same medians, a sixth of 5.53 req/s."""
    mix, full = sample.length_mix(), lg.AZURE_CONVERSATION
    i = list(full.probs).index(0.5)
    assert mix.prompt_quantiles[i] == pytest.approx(full.prompt_quantiles[i], rel=0.05)
    assert mix.output_quantiles[i] == pytest.approx(full.output_quantiles[i], rel=0.05)
    assert mix.spearman == pytest.approx(full.spearman, abs=0.03)
    assert sample.rate_per_minute().mean() == pytest.approx(lg.TRACE_RATE_RPS / 6, rel=0.02)

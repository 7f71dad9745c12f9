"""Standard errors of a share, against replications of the experiment they describe."""

import numpy as np
import pytest

from replicaplan.core.stats import batch_means_error, standard_error


def test_binomial_error_is_the_spread_of_replicated_shares():
    # 4,000 replications of "90 % quota over 200 requests": the spread of the measured shares
    rng = np.random.default_rng(1)
    shares = (rng.random((4000, 200)) < 0.9).mean(axis=1)
    assert standard_error(0.9, 200) == pytest.approx(shares.std(ddof=1), rel=0.05)
    assert round(standard_error(0.9, 200) * 100) == 2  # the source's "about 2 points"


def test_batch_means_sees_the_correlation_the_binomial_error_misses():
    # 200 independent blocks of 100 identical outcomes: the share is an average of 200 draws,
    # so its true standard error is that of 200 requests, not of 20,000
    rng = np.random.default_rng(0)
    blocks = np.repeat(rng.random(200) < 0.9, 100)
    true_se = np.sqrt(0.9 * 0.1 / 200)
    assert batch_means_error(blocks) == pytest.approx(true_se, rel=0.4)
    assert standard_error(blocks.mean(), blocks.size) < true_se / 5
    independent = rng.random(20_000) < 0.9
    assert batch_means_error(independent) == pytest.approx(np.sqrt(0.09 / 20_000), rel=0.4)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: standard_error(1.2, 10), "p"),
        (lambda: standard_error(0.5, 0), "n"),
        (lambda: batch_means_error([1, 0, 1], batches=20), "batches"),
        (lambda: batch_means_error([1, 0, 1], batches=1), "batches"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()

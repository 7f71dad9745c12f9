"""Workloads and load generators: request lengths, open-loop and closed-loop arrivals.

Request lengths
---------------
The conversation trace of Azure's LLM inference service (19,366 requests over an hour on
2023-11-16; Patel et al., *Splitwise*, ISCA 2024; CC-BY 4.0) is summarized below by the
quantiles of its prompt (ContextTokens) and answer (GeneratedTokens) lengths and by their
Spearman rank correlation. ``AzureConversationMix.sample`` draws pairs from those marginals,
joined by a Gaussian copula whose correlation reproduces the rank correlation
(r = 2 sin(π ρ_S / 6)). The raw file is read only by the tests, which check the sample against it.

Arrivals
--------
Open loop: Poisson arrivals at rate λ, or gamma inter-arrival times with a coefficient of
variation c (c = 1 is Poisson, c > 1 burstier). Closed loop: ``engine.simulate_closed`` with
N_u users and think times drawn here. A reader's own logs are read by ``logs.read_trace``.

Layer: traffic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from replicaplan.core import _check

MAX_TOKENS = 10_000_000
"""The longest prompt or answer a log row may give: more than any model's context holds."""

# Quantiles of the Azure LLM inference trace 2023, conversation service (Patel et al. 2024),
# computed from AzureLLMInferenceTrace_conv.csv with numpy's default (linear) percentile.
TRACE_PROBS = (
    0.0,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.55,
    0.6,
    0.65,
    0.7,
    0.75,
    0.8,
    0.85,
    0.9,
    0.95,
    0.975,
    0.99,
    0.995,
    1.0,
)
TRACE_PROMPT_QUANTILES = (
    2.0,
    16.8,
    29.0,
    120.0,
    181.0,
    207.0,
    372.0,
    387.0,
    396.0,
    403.0,
    414.0,
    703.0,
    984.0,
    1020.0,
    1045.0,
    1071.0,
    1097.0,
    1130.0,
    1189.0,
    1315.0,
    1876.2,
    2734.5,
    4083.0,
    4092.0,
    4142.0,
    4831.0,
    14050.0,
)
TRACE_OUTPUT_QUANTILES = (
    7.0,
    14.0,
    16.0,
    28.0,
    41.0,
    54.0,
    67.0,
    77.0,
    85.0,
    91.0,
    96.0,
    103.0,
    113.0,
    129.0,
    151.0,
    177.0,
    217.0,
    384.0,
    395.0,
    400.0,
    411.0,
    424.0,
    451.0,
    522.0,
    601.0,
    643.2,
    1000.0,
)
TRACE_SPEARMAN = 0.0728
"""Rank correlation of prompt and answer lengths in the same trace (weak: long prompts do not
mean long answers)."""
TRACE_RATE_RPS = 5.53
"""Mean arrival rate of the conversation trace: 19,366 requests in 3,502 s."""


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1…n of x, ties given the mean of the ranks they span: a value v that c of the n
    share and that L lie below spans ranks L + 1 … L + c, whose mean is L + (c + 1)/2.

    Token counts are whole numbers, so L and c are counted in one pass (``np.bincount``)
    rather than by sorting; other values are sorted."""
    if x.size and x.min() >= 0 and x.max() <= MAX_TOKENS and np.all(x == np.floor(x)):
        values = x.astype(np.int64)
        counts = np.bincount(values)
    else:
        _, values = np.unique(x, return_inverse=True)
        counts = np.bincount(values)
    below = np.cumsum(counts) - counts
    return (below + (counts + 1) / 2)[values]


def _normal_cdf(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.vectorize(math.erf, otypes=[float])(z / math.sqrt(2)))


@dataclass(frozen=True)
class LengthMix:
    """Joint distribution of (prompt, answer) lengths given by quantiles and a rank correlation."""

    probs: tuple
    prompt_quantiles: tuple
    output_quantiles: tuple
    spearman: float

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` (prompt, output) pairs; prompt ≥ 0 and output ≥ 1 tokens, integers."""
        n = _check.integer("n", n, minimum=1)
        r = 2 * math.sin(math.pi * self.spearman / 6)  # Pearson of the Gaussian copula
        z1 = rng.standard_normal(n)
        z2 = r * z1 + math.sqrt(1 - r * r) * rng.standard_normal(n)
        u1, u2 = _normal_cdf(z1), _normal_cdf(z2)
        prompt = np.rint(np.interp(u1, self.probs, self.prompt_quantiles)).astype(np.int64)
        output = np.rint(np.interp(u2, self.probs, self.output_quantiles)).astype(np.int64)
        return np.maximum(prompt, 0), np.maximum(output, 1)

    @classmethod
    def from_lengths(cls, prompt, output, probs=None) -> LengthMix:
        """The mix of observed (prompt, output) pairs: their quantiles and rank correlation.

        Quantiles are taken at ``probs`` (by default the book's grid, denser in the tails);
        the Spearman coefficient is the Pearson correlation of the ranks (ties averaged).
        Sampling the result reproduces the marginals up to the grid's interpolation and the
        rank correlation through the Gaussian copula.
        """
        prompt = np.asarray(prompt, dtype=float)
        output = np.asarray(output, dtype=float)
        if prompt.shape != output.shape or prompt.ndim != 1:
            raise ValueError("prompt and output must be 1-D arrays of the same length")
        if prompt.size < 2:
            raise ValueError(f"prompt and output need at least 2 requests, got {prompt.size}")
        if not (np.all(np.isfinite(prompt)) and np.all(np.isfinite(output))):
            raise ValueError("prompt and output lengths must be finite")
        if prompt.min() < 0 or output.min() < 0:
            raise ValueError("prompt and output lengths must be >= 0")
        grid = np.asarray(TRACE_PROBS if probs is None else probs, dtype=float)
        rp, ro = _ranks(prompt), _ranks(output)
        spearman = 0.0 if rp.std() == 0 or ro.std() == 0 else float(np.corrcoef(rp, ro)[0, 1])
        return cls(
            tuple(grid.tolist()),
            tuple(np.quantile(prompt, grid).tolist()),
            tuple(np.quantile(output, grid).tolist()),
            spearman,
        )

    def mean(self, rng_seed: int = 0, n: int = 200_000) -> tuple[float, float]:
        """Mean prompt and answer lengths of the mix (by a large seeded sample)."""
        p, o = self.sample(n, np.random.default_rng(rng_seed))
        return float(p.mean()), float(o.mean())


AZURE_CONVERSATION = LengthMix(
    TRACE_PROBS, TRACE_PROMPT_QUANTILES, TRACE_OUTPUT_QUANTILES, TRACE_SPEARMAN
)
"""The real length mix of the Azure conversation trace."""


def identical(n: int, prompt_tokens: float, output_tokens: float) -> tuple[np.ndarray, np.ndarray]:
    """``n`` identical requests (every one the mean): the workload that misjudges capacity."""
    n = _check.integer("n", n, minimum=1)
    p = int(round(_check.non_negative("prompt_tokens", prompt_tokens)))
    o = int(round(_check.positive("output_tokens", output_tokens)))
    return np.full(n, p, dtype=np.int64), np.full(n, max(o, 1), dtype=np.int64)


def poisson_arrivals(rate: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Arrival times of a Poisson process of rate λ (req/s): exponential gaps of mean 1/λ."""
    rate = _check.positive("rate", rate)
    n = _check.integer("n", n, minimum=1)
    return np.cumsum(rng.exponential(1 / rate, n))


def gamma_arrivals(rate: float, cv: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Arrival times with gamma gaps of mean 1/λ and coefficient of variation ``cv``.

    Shape k = 1/cv², scale = 1/(λ k); cv = 1 gives Poisson, cv > 1 bursts, cv < 1 regularity.
    """
    rate = _check.positive("rate", rate)
    cv = _check.positive("cv", cv)
    n = _check.integer("n", n, minimum=1)
    shape = 1 / cv**2
    return np.cumsum(rng.gamma(shape, 1 / (rate * shape), n))


def think_times(mean_s: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Exponential think times of mean Z for a closed-loop generator (Z = 0: none)."""
    mean_s = _check.non_negative("mean_s", mean_s)
    n = _check.integer("n", n, minimum=1)
    return rng.exponential(mean_s, n) if mean_s > 0 else np.zeros(n)

"""The running example: one service, one GPU type, one price, used by every chapter.

The source chapter reasons throughout on the same small world: a replica of an 8-billion-
parameter model in bf16 on one GPU, serving 64 sequences at once at 40 tokens/s each, with
320-token answers, so that it holds about 8 requests/s; an autoscaler that keeps replicas at
80 % of that; and a rented price of 2 EUR per replica-hour (a round number chosen for the
arithmetic, not a list price). Keeping it in one frozen object means that a number changed here
changes in every chapter at once, and that no chapter can quietly use another world.

>>> from replicaplan.core.example import EXAMPLE
>>> EXAMPLE.tokens_per_s
2560.0
>>> round(EXAMPLE.concurrency_target, 1)
51.2
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9
"""Decimal gigabyte, the unit of checkpoint sizes and channel bandwidths in the source."""


@dataclass(frozen=True)
class RunningExample:
    """The source chapter's running example, every field a number the source states."""

    mu_star_rps: float = 8.0
    """μ*: requests/s one replica serves within its promises."""
    target_utilization: float = 0.8
    """ρ*: the share of μ* the autoscaler aims for."""
    answer_tokens: int = 320
    """Output tokens of an average answer."""
    tokens_per_s_per_sequence: float = 40.0
    """Decode speed one sequence sees (1 / TPOT)."""
    batch: int = 64
    """Sequences a replica decodes together (continuous batching)."""
    price_per_replica_hour: float = 2.0
    """C_hour: EUR per replica-hour (an example figure, not a list price)."""
    params: float = 8e9
    """N_p: parameters of the served model."""
    bytes_per_param: float = 2.0
    """bf16 weights."""
    peak_bandwidth: float = 3e12
    """B_peak: GPU memory bandwidth, bytes/s."""
    peak_flops: float = 1e15
    """P_peak: dense 16-bit FLOP/s."""
    gpu_memory_bytes: float = 80e9
    """The GPU's memory, 80 GB (decimal, as the source counts bytes): every chapter's card."""
    layers: int = 32
    """Transformer layers of the 8 B model (for the KV cache size)."""
    kv_heads: int = 8
    """Key/value heads with grouped-query attention."""
    head_dim: int = 128
    """Size of one attention head."""
    context_tokens: int = 2000
    """n_ctx: context of a sequence in the decode roofline example."""
    ttft_slo_s: float = 1.0
    """τ_TTFT: 1 s, the classic limit for a response to feel uninterrupted (Nielsen, 1993)."""
    tpot_slo_s: float = 0.05
    """τ_TPOT: 50 ms per token, 20 tokens/s, faster than people read (about 4–5 words/s)."""
    quota: float = 0.9
    """q: the share of requests that must meet both SLOs."""
    startup_min: int = 8
    """T_start of the simulated day, in minutes."""
    big_model_params: float = 70e9
    """The 70 B model of the cold-start example."""
    min_rps: float = 12.0
    """The simulated day's night-time traffic."""
    peak_rps: float = 60.0
    """The simulated day's afternoon peak."""
    event_rps: float = 30.0
    """The 21:00 event's extra traffic."""
    event_minutes: int = 20
    """How long the 21:00 event lasts."""
    spot_cases: tuple = ((0.6, 0.1), (0.2, 0.5))
    """The source's two spot examples, (discount d, share of work lost ω): 60 % off with 10 %
    lost, and 20 % off with half lost."""

    @property
    def tokens_per_s(self) -> float:
        """ν* = B · 1/TPOT: tokens/s a full replica generates (64 × 40 = 2,560)."""
        return self.batch * self.tokens_per_s_per_sequence

    @property
    def tpot_s(self) -> float:
        """Time per output token, seconds (25 ms)."""
        return 1.0 / self.tokens_per_s_per_sequence

    @property
    def residence_s(self) -> float:
        """W̄: how long an answer stays in the replica, answer_tokens · TPOT (8 s)."""
        return self.answer_tokens * self.tpot_s

    @property
    def concurrency_target(self) -> float:
        """L* = ρ* μ* W̄, Little's law at the operating point (≈ 51 requests in flight)."""
        return self.target_utilization * self.mu_star_rps * self.residence_s

    @property
    def weight_bytes(self) -> float:
        """M_w = N_p · bytes per parameter (16 GB)."""
        return self.params * self.bytes_per_param

    @property
    def big_model_bytes(self) -> float:
        """The 70 B model's checkpoint in bf16 (140 GB)."""
        return self.big_model_params * self.bytes_per_param

    @property
    def operating_rps(self) -> float:
        """ρ* μ*: the arrival rate one replica is given by the autoscaler (6.4 req/s)."""
        return self.target_utilization * self.mu_star_rps


EXAMPLE = RunningExample()
"""The one instance every chapter imports."""

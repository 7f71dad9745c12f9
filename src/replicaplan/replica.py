"""A continuous-batching replica, simulated event to event.

The model
---------
Up to ``batch`` sequences run together. Each **decode step** advances every running sequence by
one token and lasts TPOT(b), which follows the decode roofline: a step reads the weights once
plus the KV cache of each of the b sequences, so its time is proportional to the bytes read,

    TPOT(b) = (M_w + b · n_ctx · m_kv) / B_eff,

with B_eff calibrated so that TPOT(batch) is the running example's 25 ms at 64 sequences
(40 tokens/s each, 2,560 tokens/s, μ ≈ 8 req/s for 320-token answers).

A new request's **prefill** reads its whole prompt in one compute-bound pass of
2 · N_p · prompt FLOP, which at a prefill efficiency η of the peak takes

    prefill(prompt) = 2 · N_p · prompt / (η · P_peak)

and produces the request's first token. Prefill and decode **share the GPU in time**: when
requests are admitted, the next step runs their prefills and one decode step of the sequences
already running, back to back, so the running sequences wait for the newcomers' prefill (the
default of engines that prioritize prefill, such as vLLM without chunked prefill). This is why a
burst of long prompts shows up in the TPOT of everyone else, and why TPOT has an SLO of its own.

A request waits in a FIFO queue while the batch is full and is admitted at the next step
boundary once a slot is free. Per request the simulator records arrival, first token and last
token, from which TTFT, TPOT = (end − first token)/(output tokens − 1) and latency follow.

Speed
-----
Between two events (an admission, a completion, an arrival that finds a free slot) the batch is
constant, so the simulator jumps over whole runs of identical decode steps at once: the cost is
a few heap operations per request, not one loop turn per token.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from . import _check, roofline
from .example import EXAMPLE


@dataclass(frozen=True)
class ReplicaModel:
    """Timing of one replica. Defaults: the running example (8 B model in bf16, 64 sequences)."""

    batch: int = EXAMPLE.batch
    """B: sequences decoded together."""
    tpot_full_s: float = EXAMPLE.tpot_s
    """TPOT at a full batch, seconds (the calibration point)."""
    weight_bytes: float = EXAMPLE.weight_bytes
    """M_w: bytes of weights read at every step."""
    kv_bytes_per_token: float = roofline.kv_bytes_per_token(
        EXAMPLE.layers, EXAMPLE.kv_heads, EXAMPLE.head_dim, EXAMPLE.bytes_per_param
    )
    """m_kv: KV-cache bytes per token of context (keys and values, every layer, bf16)."""
    context_tokens: float = EXAMPLE.context_tokens
    """n_ctx: mean context a running sequence carries."""
    params: float = EXAMPLE.params
    """N_p: parameters (prefill FLOP = 2 N_p per prompt token)."""
    peak_flops: float = EXAMPLE.peak_flops
    """P_peak, FLOP/s."""
    prefill_efficiency: float = 0.5
    """η: share of peak FLOP/s a prefill achieves (compute-bound, but not at peak)."""

    def __post_init__(self):
        _check.integer("batch", self.batch, minimum=1)
        for name in ("tpot_full_s", "weight_bytes", "params", "peak_flops"):
            _check.positive(name, getattr(self, name))
        _check.non_negative("kv_bytes_per_token", self.kv_bytes_per_token)
        _check.non_negative("context_tokens", self.context_tokens)
        _check.fraction("prefill_efficiency", self.prefill_efficiency)

    @property
    def effective_bandwidth(self) -> float:
        """B_eff, bytes/s, such that TPOT(batch) = tpot_full_s."""
        return (
            self.weight_bytes + self.batch * self.context_tokens * self.kv_bytes_per_token
        ) / self.tpot_full_s

    def tpot(self, b):
        """TPOT(b) = (M_w + b n_ctx m_kv) / B_eff, seconds per decode step with b sequences."""
        b = np.asarray(b, dtype=float)
        return (
            self.weight_bytes + b * self.context_tokens * self.kv_bytes_per_token
        ) / self.effective_bandwidth

    def prefill_s(self, prompt_tokens):
        """2 N_p · prompt / (η P_peak): seconds to prefill a prompt."""
        return (
            2
            * self.params
            * np.asarray(prompt_tokens, dtype=float)
            / (self.prefill_efficiency * self.peak_flops)
        )

    def raw_capacity_rps(self, output_tokens: float) -> float:
        """Requests/s a full batch completes ignoring prefill: B / (output · TPOT(B))."""
        return self.batch / (_check.positive("output_tokens", output_tokens) * self.tpot_full_s)


@dataclass(frozen=True)
class Trace:
    """Per-request times of one run, in arrival order (seconds)."""

    arrival: np.ndarray = field(repr=False)
    first_token: np.ndarray = field(repr=False)
    end: np.ndarray = field(repr=False)
    prompt: np.ndarray = field(repr=False)
    output: np.ndarray = field(repr=False)

    @property
    def ttft(self) -> np.ndarray:
        """Time to first token."""
        return self.first_token - self.arrival

    @property
    def tpot(self) -> np.ndarray:
        """(end − first token)/(output − 1); 0 for one-token answers."""
        steps = np.maximum(self.output - 1, 1)
        return np.where(self.output > 1, (self.end - self.first_token) / steps, 0.0)

    @property
    def latency(self) -> np.ndarray:
        """End-to-end latency (residence time W)."""
        return self.end - self.arrival

    def meets(self, ttft_slo_s: float, tpot_slo_s: float) -> np.ndarray:
        """True for requests that meet both SLOs: TTFT ≤ τ_TTFT and TPOT ≤ τ_TPOT."""
        _check.positive("ttft_slo_s", ttft_slo_s)
        _check.positive("tpot_slo_s", tpot_slo_s)
        return (self.ttft <= ttft_slo_s) & (self.tpot <= tpot_slo_s)

    def window(self, skip: int) -> Trace:
        """The trace without its first ``skip`` requests (the warm-up)."""
        skip = _check.integer("skip", skip, minimum=0)
        if skip >= self.arrival.size:
            raise ValueError(
                f"skip must be < the number of requests ({self.arrival.size}), got {skip}"
            )
        sl = slice(skip, None)
        return Trace(
            self.arrival[sl], self.first_token[sl], self.end[sl], self.prompt[sl], self.output[sl]
        )

    @property
    def throughput_rps(self) -> float:
        """Completed requests per second between the first arrival and the last completion."""
        return self.arrival.size / float(self.end.max() - self.arrival.min())


def _lengths(prompt, output, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    prompt = np.asarray(prompt)
    output = np.asarray(output)
    if prompt.ndim != 1 or output.shape != prompt.shape or prompt.size == 0:
        raise ValueError("prompt and output must be non-empty 1-d arrays of the same length")
    if n is not None and prompt.size < n:
        raise ValueError(f"need lengths for {n} requests, got {prompt.size}")
    if np.any(prompt < 0) or not np.all(np.isfinite(prompt)):
        raise ValueError("prompt lengths must be finite and >= 0")
    if np.any(output < 1) or not np.all(np.isfinite(output)):
        raise ValueError("output lengths must be finite and >= 1")
    return prompt.astype(np.int64), output.astype(np.int64)


def simulate_open(model: ReplicaModel, arrival, prompt, output) -> Trace:
    """Serve requests that arrive at fixed times (open loop): arrivals do not wait for answers.

    ``arrival`` must be non-decreasing seconds; ``prompt`` and ``output`` are token counts.
    """
    arrival = np.asarray(arrival, dtype=float)
    if arrival.ndim != 1 or arrival.size == 0:
        raise ValueError("arrival must be a non-empty 1-d array of times")
    if not np.all(np.isfinite(arrival)) or np.any(np.diff(arrival) < 0):
        raise ValueError("arrival must hold finite, non-decreasing times")
    prompt, output = _lengths(prompt, output, arrival.size)
    incoming = [(t, i) for i, t in enumerate(arrival.tolist())]  # sorted, hence a heap
    return _run(model, incoming, prompt, output, arrival.size, think=None)


def simulate_closed(
    model: ReplicaModel, users: int, think_s, prompt, output, start_s=None
) -> Trace:
    """Serve ``users`` virtual users, each sending its next request ``think`` after its last answer.

    ``think_s`` holds one think time per request (request k's user waits think_s[k] after k's
    answer); ``start_s`` the first send time of each user (default: all at 0). The run stops
    after len(prompt) requests; the k-th request to arrive gets the k-th lengths.
    """
    users = _check.integer("users", users, minimum=1)
    prompt, output = _lengths(prompt, output)
    n = prompt.size
    think = np.asarray(think_s, dtype=float)
    if think.shape != (n,) or np.any(think < 0) or not np.all(np.isfinite(think)):
        raise ValueError("think_s must hold one finite time >= 0 per request")
    start = np.zeros(users) if start_s is None else np.asarray(start_s, dtype=float)
    if start.shape != (users,) or np.any(start < 0):
        raise ValueError("start_s must hold one time >= 0 per user")
    incoming = sorted((t, -1 - u) for u, t in enumerate(start.tolist()))
    return _run(model, incoming, prompt, output, n, think=think.tolist())


def _run(
    model: ReplicaModel,
    incoming: list,
    prompt: np.ndarray,
    output: np.ndarray,
    n: int,
    think: list | None,
) -> Trace:
    """The event loop shared by both load generators.

    ``incoming`` is a heap of (time, key) not yet arrived. Requests are numbered in arrival
    order; in the closed loop, key = −1 − user, and a completion sends that user's next request.
    """
    B = model.batch
    step_s = model.tpot(np.arange(B + 1)).tolist()
    prefill = model.prefill_s(prompt[:n]).tolist()
    out = output[:n].tolist()
    arrival = [0.0] * n
    first = [0.0] * n
    end = [0.0] * n
    user_of = [0] * n
    closed = think is not None

    t = 0.0
    steps = 0  # decode steps done so far; a running request finishes at a step number
    running: list = []  # heap of (finishing step, request)
    admitted = 0
    pop, push = heapq.heappop, heapq.heappush

    def finish(i: int, now: float) -> None:
        end[i] = now
        if closed:  # the user sends again; arrivals past the n-th are never admitted
            push(incoming, (now + think[i], -1 - user_of[i]))

    while admitted < n or running:
        b = len(running)
        if admitted < n and b < B and incoming and incoming[0][0] <= t:
            # an admission step: prefill of every arrived request that fits, plus one decode step
            # of the sequences already running, back to back
            new = []
            while admitted < n and b + len(new) < B and incoming and incoming[0][0] <= t:
                when, key = pop(incoming)
                i = admitted
                admitted += 1
                arrival[i] = when
                user_of[i] = -1 - key
                new.append(i)
            duration = sum(prefill[i] for i in new)
            if b:
                duration += step_s[b]
                steps += 1
            t += duration
            for i in new:
                first[i] = t
                if out[i] == 1:
                    finish(i, t)
                else:
                    push(running, (steps + out[i] - 1, i))
        elif not b:
            if admitted >= n or not incoming:
                break
            t = max(t, incoming[0][0])  # idle: jump to the next arrival
            continue
        else:
            k = running[0][0] - steps  # steps to the next completion
            if admitted < n and b < B and incoming:
                k = min(k, max(1, math.ceil((incoming[0][0] - t) / step_s[b])))
            t += k * step_s[b]
            steps += k
        while running and running[0][0] <= steps:
            finish(pop(running)[1], t)

    return Trace(
        np.array(arrival[:admitted]),
        np.array(first[:admitted]),
        np.array(end[:admitted]),
        prompt[:admitted].copy(),
        output[:admitted].copy(),
    )

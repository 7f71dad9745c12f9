"""A continuous-batching replica that behaves like a serving engine, simulated event to event.

The model
---------
Up to ``batch`` sequences run together (vLLM's ``max_num_seqs``); their KV cache must fit in
``kv_capacity_tokens``. An engine step carries T = b + P tokens (one for each of the b sequences
it decodes, P of prompts) and runs three kinds of kernel one after the other:

    step(b, C, P, A) = t_0 + b · t_seq + comm(T)                        fixed work
                       + max(2 N_p T / F_ach,  M_w / B_ach)             the linear layers
                       + C · max(m_kv / B_ach,  4 d_att / F_ach)       attention over the cache
                       + 4 d_att A / F_ach                              attention of the prompts

The linear layers read every weight once and do 2 N_p FLOP per token, so they take whichever is
longer: the read (a decode step of few sequences) or the arithmetic (a large batch, a prompt);
attention reads the C tokens of cache the step's sequences hold and is memory-bound for every
model here (4 d_att FLOP per token of cache against m_kv bytes: about 4 FLOP/byte for
Llama-3-8B, where the GPUs' ridge is 100 or more); the prompts' attention is arithmetic over A,
the sum over the step's prompt tokens of the positions each attends to. t_0 is the step's floor
(launches, scheduling, sampling), t_seq the CPU and sampling time per decoded sequence, and comm
the all-reduces of tensor parallelism over the step's tokens (zero on one GPU, see
``from_hardware``). ``step_expression`` derives it, and ``decode_crossover_expression`` the batch
at which decode turns compute-bound.

The engine that runs it is ``serving.engine``; a run's record is ``serving.trace.Trace``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.serving import roofline
from replicaplan.serving.catalogue import (
    GPU,
    GPUS,
    MODELS,
    TOKEN_BUDGET,
    GiB,
    ModelShape,
    check_mixture,
    engine_defaults,
    replica_hour_price,
)

WATERMARK = 0.01
"""vLLM V0's admission watermark: the share of KV-cache blocks an admission kept free
(``watermark=0.01`` of ``BlockSpaceManager``, vllm/core/block_manager.py). V1 keeps none; the
replica applies it to separate prefill passes, V0's scheduling, only."""


_EXAMPLE_MBU = roofline.mbu(
    EXAMPLE.weight_bytes,
    EXAMPLE.batch * EXAMPLE.context_tokens * MODELS["example-8b"].kv_bytes_per_token,
    EXAMPLE.tpot_s,
    EXAMPLE.peak_bandwidth,
)
_EXAMPLE_PREFILL_EFFICIENCY = 0.5
PREFILL_EFFICIENCY = 0.70
"""Share of the dense peak a datasheet replica's matrix products reach. Vidur's published kernel
profiles of Llama-3-8B on an A100 (microsoft/vidur, data/profiling/compute/a100/
meta-llama/Meta-Llama-3-8B/mlp.csv) time the linear layers of a 32,768-token batch at 61.7 ms a
layer (QKV 7.2, output 4.9, gated up 33.0, down 16.6), 0.74 of the 312 TFLOP/s peak; smaller
steps reach a little less. The running example keeps the source's 0.5."""
BANDWIDTH_EFFICIENCY = 0.75
"""Share of the peak memory bandwidth a step's reads reach (the model bandwidth utilization
well-tuned engines reach on one GPU, 0.6 to 0.8 in Agarwal et al. 2023)."""
MEMORY_UTILIZATION = 0.9
"""vLLM's default ``gpu_memory_utilization``: the share of GPU memory the engine may take."""

# The rest of a vLLM engine's memory, from its own profile of Llama-3-8B (vLLM PR #10511, on H100s:
# the instance may use 0.90 × 79.22 = 71.29 GiB; weights 14.96 GiB; non-torch memory 1.79 GiB on
# one GPU and 3.58 GiB per GPU with two, the NCCL and custom all-reduce buffers; the activation
# peak of its profiling pass over 8,192 tokens 1.26 GiB; 53.29 GiB left for the KV cache)
NON_TORCH_BYTES = (1.79 * GiB, 3.58 * GiB)
"""Memory outside PyTorch's allocator per GPU (CUDA context, cuBLAS and NCCL workspaces), on one
GPU and per GPU of a tensor-parallel group."""
ACTIVATION_BYTES_PER_TOKEN_WIDTH = 1.26 * GiB / (8192 * 4096)
"""The activation peak of vLLM's profiling pass per token it carries and per unit of the model's
hidden width (1.26 GiB over 8,192 tokens of a 4,096-wide model): the pass carries the step's
token budget, and its activations grow with the tokens and the width. CUDA graphs are captured
after the cache is allocated, out of the memory ``gpu_memory_utilization`` leaves over."""


# The engine constants of a datasheet replica. Five numbers that no datasheet gives (the step's
# floor, its time per sequence, the latency of an all-reduce, and the shares of the peak FLOP/s
# and bandwidth reached) are chosen once against the published measurements in
# benchmarks/published (TensorRT-LLM's performance tables, NeMo's Llama-2 latencies, vLLM
# benchmark results); ``simulation.published`` compares every row, and the chapter "How much a
# replica holds" shows the error that is left. Each lies where independent profiles put it:
STEP_FLOOR_S = 2e-3
"""t_0 of a datasheet replica: 2 ms a step (launches, scheduling, sampling). Vidur's CPU profile of
vLLM V0 serving Llama-2-7B on an A100 (microsoft/vidur, data/profiling/a100/cpu_overheads.csv)
puts scheduling, sampling and input preparation at 1.4 ms a step at a batch of 8."""
SEQ_STEP_S = 2e-6
"""t_seq of a datasheet replica: 2 µs a decoded sequence. The same V0 profile grows by 37 µs a
sequence, work that V1 and TensorRT-LLM overlap with the GPU: at that rate a batch of 1,024 would
spend 38 ms a step on the CPU, and the published saturation throughputs would be out of reach."""
ALLREDUCE_LATENCY_S = 45e-6
"""Latency of one small all-reduce with its kernel launch: Vidur's NCCL profile on a DGX H100
gives 20 to 37 µs for messages up to 64 KiB (data/profiling/network/h100_dgx/all_reduce.csv)
before the launch."""


def kv_cache_bytes_per_gpu(
    shape: ModelShape,
    gpu: GPU,
    gpus: int = 1,
    memory_utilization: float = MEMORY_UTILIZATION,
    token_budget: int = TOKEN_BUDGET,
) -> float:
    """The bytes vLLM leaves for the KV cache on each GPU of a replica, as its worker computes
    them: u · memory − weights/g − non-torch memory − the activation peak of a step of
    ``token_budget`` tokens (vllm/v1/worker/gpu_worker.py, ``determine_available_memory``)."""
    non_torch = NON_TORCH_BYTES[0] if gpus == 1 else NON_TORCH_BYTES[1]
    activation = ACTIVATION_BYTES_PER_TOKEN_WIDTH * token_budget * shape.hidden / gpus
    usable = gpu.memory_bytes * memory_utilization
    return usable - shape.weight_bytes / gpus - non_torch - activation


def _kv_capacity(
    shape: ModelShape,
    gpu: GPU,
    gpus: int,
    memory_utilization: float,
    token_budget: int = TOKEN_BUDGET,
) -> float:
    free = kv_cache_bytes_per_gpu(shape, gpu, gpus, memory_utilization, token_budget)
    if free <= 0:
        raise ValueError(
            f"the weights of {shape.name} ({shape.weight_bytes / 1e9:.1f} GB) and the engine's "
            f"own memory do not fit in {gpus} × {gpu.name} at memory_utilization "
            f"{memory_utilization:g}: use more GPUs (gpus) or a larger GPU"
        )
    return math.floor(gpus * free / shape.kv_bytes_per_token)


@dataclass(frozen=True)
class ReplicaModel:
    """Timing and memory of one replica. Defaults: the running example (8 B model, bf16, 64
    sequences, one 3 TB/s GPU), as ``ReplicaModel.from_hardware`` builds it."""

    batch: int = EXAMPLE.batch
    """B: sequences decoded together at most (vLLM's max_num_seqs)."""
    weight_bytes: float = EXAMPLE.weight_bytes
    """M_w: bytes of weights the GPUs hold (all together); a dense model's step reads them all,
    a mixture of experts' only those its tokens are routed to (``weight_read_bytes``)."""
    kv_bytes_per_token: float = MODELS["example-8b"].kv_bytes_per_token
    """m_kv: KV-cache bytes per token of context (keys and values, every layer)."""
    params: float = EXAMPLE.params
    """N_p: parameters a token computes with (2 N_p FLOP per token; a mixture of experts'
    active ones, ``ModelShape.active_params``)."""
    bandwidth: float = EXAMPLE.peak_bandwidth * _EXAMPLE_MBU
    """B_ach: memory bandwidth a decode step achieves, bytes/s (all GPUs together)."""
    prefill_flops: float = EXAMPLE.peak_flops * _EXAMPLE_PREFILL_EFFICIENCY
    """F_ach: FLOP/s the matrix products of a step achieve, prompt and decode tokens alike (all
    GPUs together)."""
    step_floor_s: float = 0.0
    """t_0: fixed time of every step (launches, sampling, scheduling)."""
    prefill_floor_s: float = 0.0
    """Fixed time of every separate prefill pass."""
    token_budget: int = TOKEN_BUDGET
    """Most prompt tokens one prefill pass takes."""
    kv_capacity_tokens: float = _kv_capacity(
        MODELS["example-8b"], GPUS["example"], 1, MEMORY_UTILIZATION
    )
    """Tokens of context the KV cache holds (all GPUs together)."""
    comm_fixed_s: float = 0.0
    """Tensor-parallel communication per step or pass, fixed part (latency of the all-reduces)."""
    comm_per_sequence_s: float = 0.0
    """Tensor-parallel communication per token a step or pass carries (bytes over the link)."""
    context_tokens: float = EXAMPLE.context_tokens
    """n_ctx: the context ``tpot(b)`` assumes for each sequence (the roofline example's 2,000)."""
    gpus: int = 1
    """GPUs of one replica (tensor parallelism): what a replica-hour pays for."""
    price_per_gpu_hour: float | None = EXAMPLE.price_per_replica_hour
    """Price of one GPU-hour (the catalogue's list price; the running example's 2 €), or None
    when unknown (a fitted replica): the planner then needs one."""
    currency: str = "€"
    seq_step_s: float = 0.0
    """t_seq: time a step spends per sequence it decodes at fixed bytes (activations of the
    MLP, norms, sampling), which ``fit`` measures; zero in the datasheet model."""
    chunked_prefill: bool = True
    """Prompts cut into the decode steps under the token budget (vLLM V1); False for separate
    prefill passes (vLLM V0 without chunked prefill)."""
    watermark: float | None = None
    """Share of the KV cache an admission keeps free; None: V1's none with chunked prefill, V0's
    1 % (``WATERMARK``) with separate passes."""
    prefix_hit: float = 0.0
    """Share of each prompt already in the cache (prefix caching): cache, no compute."""
    attention_width: float = MODELS["example-8b"].attention_width
    """d_att = layers × hidden: 4 d_att FLOP per query token and per token it attends to."""
    expert_bytes: float = 0.0
    """Bytes of a mixture of experts' routed experts (part of ``weight_bytes``); 0 if dense."""
    experts: int = 0
    """E, the experts of each layer (0: dense)."""
    experts_per_token: int = 0
    """k, the experts each token is routed to in each layer."""
    source: str = field(default="the running example", compare=False)
    """Where its numbers come from: the running example, a datasheet, or a fit to measurements
    (the planner's report says which)."""

    def __post_init__(self):
        _check.integer("batch", self.batch, minimum=1)
        _check.integer("token_budget", self.token_budget, minimum=1)
        _check.integer("gpus", self.gpus, minimum=1)
        if self.price_per_gpu_hour is not None:
            _check.positive("price_per_gpu_hour", self.price_per_gpu_hour)
        if not isinstance(self.chunked_prefill, bool):
            raise ValueError(f"chunked_prefill must be True or False, got {self.chunked_prefill!r}")
        if self.chunked_prefill and self.token_budget < self.batch:
            # vLLM refuses the same (SchedulerConfig's check that max_num_batched_tokens >=
            # max_num_seqs): a step must carry one token of every running sequence
            raise ValueError(
                f"token_budget must be >= batch ({self.batch}) with chunked prefill, "
                f"got {self.token_budget}"
            )
        for name in ("watermark", "prefix_hit"):
            value = getattr(self, name)
            if name == "watermark" and value is None:
                continue
            if not (isinstance(value, (int, float)) and 0 <= value < 1):
                raise ValueError(f"{name} must be in [0, 1), got {value!r}")
        for name in ("weight_bytes", "params", "bandwidth", "prefill_flops"):
            _check.positive(name, getattr(self, name))
        for name in (
            "kv_bytes_per_token",
            "step_floor_s",
            "prefill_floor_s",
            "comm_fixed_s",
            "comm_per_sequence_s",
            "context_tokens",
            "seq_step_s",
            "attention_width",
        ):
            _check.non_negative(name, getattr(self, name))
        if not self.kv_capacity_tokens >= 1:
            raise ValueError(f"kv_capacity_tokens must be >= 1, got {self.kv_capacity_tokens!r}")
        check_mixture(
            self.experts,
            self.experts_per_token,
            ("expert_bytes", self.expert_bytes),
            ("weight_bytes", self.weight_bytes),
        )

    # ------------------------------------------------------------------ the two passes

    def _fixed_s(self, b, tokens, floor):
        """The step's fixed work: its floor, t_seq per decoded sequence and the all-reduces over
        the tokens it carries (none when it carries none)."""
        return (
            floor
            + self.seq_step_s * b
            + np.where(tokens > 0, self.comm_fixed_s + self.comm_per_sequence_s * tokens, 0.0)
        )

    def weight_read_bytes(self, tokens):
        """Bytes of weights a step or pass over ``tokens`` tokens reads (``weights_read``)."""
        return weights_read(
            self.weight_bytes, self.expert_bytes, self.experts, self.experts_per_token, tokens
        )

    def _linear_s(self, tokens):
        """The linear layers over ``tokens`` tokens: the weights' read or their arithmetic,
        whichever is longer."""
        return np.maximum(
            2 * self.params * tokens / self.prefill_flops,
            self.weight_read_bytes(tokens) / self.bandwidth,
        )

    @property
    def cache_s_per_token(self) -> float:
        """Attention's time per token of cache a step reads: max(m_kv/B_ach, 4 d_att/F_ach)."""
        return max(
            self.kv_bytes_per_token / self.bandwidth, 4 * self.attention_width / self.prefill_flops
        )

    def step_s(self, b, context_total, prefill_tokens=0, attended=0):
        """step(b, C, P, A) = t_0 + b t_seq + comm(b + P) + max(2 N_p (b + P)/F_ach, M_w/B_ach)
        + C max(m_kv/B_ach, 4 d_att/F_ach) + 4 d_att A/F_ach: a step decoding b sequences that
        hold C tokens of context in all (their cache and any other the step reads), prefilling P
        prompt tokens (0 for a pure decode step) whose positions add up to A (each attends to
        that many tokens; 0 for none)."""
        b = np.asarray(b, dtype=float)
        tokens = b + np.asarray(prefill_tokens, dtype=float)
        return (
            self._fixed_s(b, tokens, self.step_floor_s)
            + self._linear_s(tokens)
            + np.asarray(context_total, dtype=float) * self.cache_s_per_token
            + 4 * self.attention_width * np.asarray(attended, dtype=float) / self.prefill_flops
        )

    @property
    def price_per_replica_hour(self) -> float | None:
        """Price of a replica-hour: GPUs × price of a GPU-hour (None when the price is unknown)."""
        return replica_hour_price(self.price_per_gpu_hour, self.gpus)

    @property
    def admission_watermark(self) -> float:
        """The share of the cache an admission keeps free: ``watermark``, or by default none
        with chunked prefill (vLLM V1) and 1 % with separate passes (V0)."""
        if self.watermark is not None:
            return self.watermark
        return 0.0 if self.chunked_prefill else WATERMARK

    @property
    def watermark_tokens(self) -> int:
        """Tokens of cache an admission keeps free: int(watermark · K), as vLLM counts blocks."""
        if math.isinf(self.kv_capacity_tokens):
            return 0
        return int(self.admission_watermark * self.kv_capacity_tokens)

    def prefix_hit_tokens(self, prompt):
        """Tokens of a prompt found in the prefix cache: floor(prefix_hit · prompt). A prefill
        computes the rest, and at least one token (the engine samples from the last)."""
        prompt = np.asarray(prompt)
        return np.floor(self.prefix_hit * prompt).astype(np.int64)

    def prefill_pass_s(self, prompt_tokens, attended=None):
        """prefill(P, A) = floor_p + comm(P) + max(2 N_p P/F_ach, M_w/B_ach) + 4 d_att A/F_ach: one
        separate pass over P prompt tokens in all, whose positions add up to A (by default one
        prompt of P tokens from its start: A = P(P + 1)/2)."""
        tokens = np.asarray(prompt_tokens, dtype=float)
        if attended is None:
            attended = tokens * (tokens + 1) / 2
        return (
            self._fixed_s(0.0, tokens, self.prefill_floor_s)
            + self._linear_s(tokens)
            + 4 * self.attention_width * np.asarray(attended, dtype=float) / self.prefill_flops
        )

    def tpot(self, b):
        """Seconds per decode step with b sequences of ``context_tokens`` each (TPOT)."""
        b = np.asarray(b, dtype=float)
        return self.step_s(b, b * self.context_tokens)

    def prefill_s(self, prompt_tokens):
        """Seconds of a prefill pass over one prompt (TTFT of a request that finds the GPU idle)."""
        return self.prefill_pass_s(prompt_tokens)

    @property
    def tpot_full_s(self) -> float:
        """TPOT at a full batch of ``context_tokens`` each (25 ms for the running example)."""
        return float(self.tpot(self.batch))

    def max_rate_rps(self, output_tokens: float, prompt_tokens: float | None = None) -> float:
        """Requests/s a full batch completes: B / (output · TPOT(B)) ignoring prefill, or, with
        ``prompt_tokens``, B / (output · TPOT(B) + B · prefill), since each prompt's compute
        holds up the batch's decoding: prefill = 2 N_p P/F_ach plus its attention when the prompt
        rides in the decode steps (chunked), the whole pass with its floor when it runs apart."""
        decode = _check.positive("output_tokens", output_tokens) * self.tpot_full_s
        if prompt_tokens is None:
            return self.batch / decode
        prompt = _check.non_negative("prompt_tokens", prompt_tokens)
        hit = float(self.prefix_hit_tokens(prompt))
        computed = max(prompt - hit, 1.0)
        attended = (prompt * (prompt + 1) - hit * (hit + 1)) / 2
        if self.chunked_prefill:
            prefill = (
                2 * self.params * computed + 4 * self.attention_width * attended
            ) / self.prefill_flops
        else:
            prefill = float(self.prefill_pass_s(computed, attended))
        return self.batch / (decode + self.batch * prefill)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_hardware(
        cls,
        model: ModelShape | str,
        gpu: GPU | str,
        *,
        gpus: int = 1,
        batch: int | None = None,
        bandwidth_efficiency: float = BANDWIDTH_EFFICIENCY,
        prefill_efficiency: float = PREFILL_EFFICIENCY,
        step_floor_s: float = STEP_FLOOR_S,
        prefill_floor_s: float | None = None,
        seq_step_s: float = SEQ_STEP_S,
        memory_utilization: float = MEMORY_UTILIZATION,
        token_budget: int | None = None,
        allreduce_latency_s: float = ALLREDUCE_LATENCY_S,
        context_tokens: float = EXAMPLE.context_tokens,
        dtype: str | None = None,
        kv_dtype: str | None = None,
    ) -> ReplicaModel:
        """A replica of ``model`` on ``gpus`` × ``gpu`` (tensor parallel over g = ``gpus``), as
        vLLM V1's OpenAI server runs it by default.

        The batch cap and token budget are vLLM's for the card (``engine_defaults``: 1,024 and
        8,192 on an H100 or H200, 256 and 2,048 on an A100 or L40S); ``batch`` or
        ``token_budget`` set others (the budget at least the batch). The matrix products reach
        ``prefill_efficiency`` of the card's dense peak for the weights' type (its FP8 peak for
        FP8 weights where it has FP8 tensor cores, ``dtype="fp8"``), the reads
        ``bandwidth_efficiency`` of its bandwidth; every step pays ``step_floor_s`` and
        ``seq_step_s`` per sequence it decodes (``STEP_FLOOR_S``, ``SEQ_STEP_S``); a separate
        prefill pass pays ``prefill_floor_s`` (the step floor by default). The KV cache
        (``kv_dtype``: its values' type, the weights' by default) holds what vLLM's worker
        leaves it (``kv_cache_bytes_per_gpu``). With g > 1 every step or pass over T tokens runs
        two all-reduces per layer of their hidden states (T · hidden · 2 bytes); a ring
        all-reduce moves 2 (g − 1)/g of them over each link, so

            comm(T) = 2 · layers · [latency + 2 (g − 1)/g · T · hidden · 2 / link bandwidth].
        """
        shape = MODELS[model] if isinstance(model, str) else model
        card = GPUS[gpu] if isinstance(gpu, str) else gpu
        shape = shape.with_dtype(dtype, kv_dtype if kv_dtype is not None else dtype)
        gpus = _check.integer("gpus", gpus, minimum=1)
        if shape.kv_heads % gpus and gpus % shape.kv_heads:
            # vLLM shards the KV heads over the tensor-parallel group, or replicates them when
            # the group is a multiple of their number; neither splits 8 heads over 3 GPUs
            raise ValueError(
                f"gpus: {shape.kv_heads} KV heads of {shape.name} do not split over {gpus} GPUs"
            )
        _check.fraction("bandwidth_efficiency", bandwidth_efficiency)
        _check.fraction("prefill_efficiency", prefill_efficiency)
        _check.fraction("memory_utilization", memory_utilization)
        _check.non_negative("allreduce_latency_s", allreduce_latency_s)
        _check.non_negative("step_floor_s", step_floor_s)
        _check.non_negative("seq_step_s", seq_step_s)
        default_batch, default_budget = engine_defaults(card)
        if batch is None:
            batch = default_batch
        batch = _check.integer("batch", batch, minimum=1)
        if token_budget is None:  # vLLM's default, raised to the batch cap a step must carry
            token_budget = max(default_budget, batch)
        capacity = _kv_capacity(shape, card, gpus, memory_utilization, token_budget)
        if gpus > 1:
            ring = 2 * (gpus - 1) / gpus
            per_layer_bytes = shape.hidden * 2.0  # activations stay 16-bit under FP8 weights
            comm_fixed = 2 * shape.layers * allreduce_latency_s
            comm_per_seq = 2 * shape.layers * ring * per_layer_bytes / card.link_bandwidth
        else:
            comm_fixed = comm_per_seq = 0.0
        return cls(
            batch=batch,
            weight_bytes=shape.weight_bytes,
            kv_bytes_per_token=shape.kv_bytes_per_token,
            params=shape.active_params,
            expert_bytes=shape.expert_bytes,
            experts=shape.experts,
            experts_per_token=shape.experts_per_token,
            bandwidth=gpus * card.bandwidth * bandwidth_efficiency,
            prefill_flops=gpus * card.flops_for(shape.dtype) * prefill_efficiency,
            step_floor_s=step_floor_s,
            prefill_floor_s=step_floor_s if prefill_floor_s is None else prefill_floor_s,
            seq_step_s=seq_step_s,
            token_budget=token_budget,
            kv_capacity_tokens=capacity,
            comm_fixed_s=comm_fixed,
            comm_per_sequence_s=comm_per_seq,
            context_tokens=context_tokens,
            gpus=gpus,
            price_per_gpu_hour=card.price_per_gpu_hour,
            currency=card.currency,
            attention_width=shape.attention_width,
            source=f"datasheet: {shape.name} ({shape.dtype}) on {gpus} × {card.name}",
        )

    @classmethod
    def fit(cls, model: ModelShape | str, tpot=(), ttft=(), **kwargs) -> ReplicaModel:
        """Fit the step's floor, bandwidth and per-sequence time to measured TPOTs, and the
        prefill's floor and FLOP/s to measured TTFTs, by least squares.

        ``tpot`` is a sequence of (batch, context tokens per sequence, seconds per step) and
        ``ttft`` of (prompt tokens, seconds) measured on an idle server, two or more of each:

            step = floor + bytes / B + b · t_seq,      prefill = floor_p + 2 N_p P / F.

        t_seq can be told from the bandwidth only when the measurements vary the context at a
        fixed batch (a grid of batch × context); otherwise it is left at zero. A floor or a t_seq
        that comes out negative but within three standard errors of zero is measurement noise: it
        is set to zero and the rest refitted, and ``fit`` says so in a ``FitNote`` warning
        (``fit_notes`` returns the notes instead). One beyond the noise is refused. The other
        fields come from ``kwargs``.
        """
        fitted, notes = cls.fit_notes(model, tpot, ttft, **kwargs)
        for note in notes:
            warnings.warn(note, FitNote, stacklevel=2)
        return fitted

    @classmethod
    def fit_notes(cls, model, tpot=(), ttft=(), **kwargs) -> tuple[ReplicaModel, list[str]]:
        """``fit``, returning the model and the notes on what was clamped or left out."""
        shape = MODELS[model] if isinstance(model, str) else model
        tpot, ttft = [tuple(x) for x in tpot], [tuple(x) for x in ttft]
        if len(tpot) < 2 or len({(b, c) for b, c, _ in tpot}) < 2:
            raise ValueError("tpot needs two or more measurements at different batch or context")
        if len(ttft) < 2 or len({p for p, _ in ttft}) < 2:
            raise ValueError("ttft needs two or more measurements at different prompt lengths")
        for b, c, sec in tpot:
            _check.integer("tpot batch", int(b), minimum=1)
            _check.non_negative("tpot context", c)
            _check.positive("tpot seconds", sec)
        for p, sec in ttft:
            _check.positive("ttft prompt tokens", p)
            _check.positive("ttft seconds", sec)
        notes: list[str] = []
        step = _fit_line_terms(
            [
                (1.0, float(_shape_read(shape, b)) + b * c * shape.kv_bytes_per_token, float(b))
                for b, c, _ in tpot
            ],
            [sec for _, _, sec in tpot],
            ("step floor", "bytes", "per-sequence time t_seq"),
            "TPOT",
            notes,
        )
        floor, per_byte, per_seq = step
        if per_byte <= 0:
            raise ValueError("the TPOT measurements give a non-positive bandwidth")
        prefill = _fit_line_terms(
            [
                (1.0, 2 * shape.active_params * p + 2 * shape.attention_width * p * (p + 1))
                for p, _ in ttft
            ],
            [sec for _, sec in ttft],
            ("prefill floor", "FLOP"),
            "TTFT",
            notes,
        )
        p_floor, per_flop = prefill
        if per_flop <= 0:
            raise ValueError("the TTFT measurements give non-positive prefill FLOP/s")
        kwargs.setdefault("price_per_gpu_hour", None)
        kwargs.setdefault("currency", "")
        kwargs.setdefault("source", "fitted to measured TPOT and TTFT points")
        fitted = cls(
            weight_bytes=shape.weight_bytes,
            kv_bytes_per_token=shape.kv_bytes_per_token,
            params=shape.active_params,
            expert_bytes=shape.expert_bytes,
            experts=shape.experts,
            experts_per_token=shape.experts_per_token,
            bandwidth=1 / per_byte,
            step_floor_s=floor,
            seq_step_s=per_seq,
            prefill_flops=1 / per_flop,
            prefill_floor_s=p_floor,
            attention_width=shape.attention_width,
            **kwargs,
        )
        return fitted, notes


def weights_read(weight_bytes, expert_bytes, experts: int, per_token: int, tokens):
    """Bytes of weights a step over ``tokens`` tokens reads. A dense model reads all of them,
    M_w. A mixture of experts reads its shared weights and, in each layer, the experts at least
    one token is routed to: when each token takes k of the E experts as if at random, an
    expert is left out by all T tokens with probability (1 − k/E)^T, so the step reads

        M_w − M_e (1 − k/E)^T   in expectation,

    from the k/E share of the experts at T = 1 (the active weights) towards all of M_w as the
    batch grows. Real routers are not uniform: a skewed one touches fewer experts, and this is
    then an upper bound on the bytes."""
    if not experts:
        return weight_bytes
    return weight_bytes - expert_bytes * (1 - per_token / experts) ** np.asarray(tokens, float)


def _shape_read(shape: ModelShape, tokens):
    return weights_read(
        shape.weight_bytes, shape.expert_bytes, shape.experts, shape.experts_per_token, tokens
    )


class FitNote(UserWarning):
    """A term of ``ReplicaModel.fit`` set to zero: negative within noise, or not measurable."""


def _fit_line_terms(rows, y, names, what: str, notes: list) -> list[float]:
    """Least squares of y on the columns of ``rows`` (the first a constant: the floor).

    Terms other than the slope named second may be dropped: one the measurements cannot tell
    apart (the design's rank is short) is left at zero; a floor or a third term that comes out
    negative within three standard errors of zero is set to zero and the rest refitted; one
    negative beyond that is refused. Each drop is said in ``notes``.
    """
    x = np.array(rows, dtype=float)
    y = np.array(y, dtype=float)
    scale = np.abs(x).max(axis=0)
    scale[scale == 0] = 1.0
    keep = list(range(x.shape[1]))
    if len(keep) > 2 and np.linalg.matrix_rank(x / scale) < len(keep):
        keep.remove(2)
        notes.append(
            f"the {what} measurements vary batch and context together, so the {names[2]} cannot "
            "be told from the bandwidth: it is left at zero (measure at several contexts for "
            "one batch to fit it)"
        )
    while True:
        coef, se = _least_squares(x[:, keep] / scale[keep], y)
        coef, se = coef / scale[keep], se / scale[keep]
        negative = [(k, c, e) for k, c, e in zip(keep, coef, se, strict=True) if k != 1 and c < 0]
        if not negative:
            break
        k, c, e = negative[0]
        rounding = -c <= 1e-9 * float(np.abs(y).max())  # zero but for the arithmetic
        if not rounding and c < -3 * e:
            raise ValueError(
                f"the {what} measurements give a negative {names[k]} ({c:.3g}, standard error "
                f"{e:.2g}): check the measurements"
            )
        keep.remove(k)
        if not rounding:
            notes.append(
                f"the {what} measurements give a {names[k]} of {c:.3g} s, negative but within "
                f"noise of zero (standard error {e:.2g}): set to zero"
            )
    out = [0.0] * x.shape[1]
    for k, c in zip(keep, coef, strict=True):
        out[k] = float(c)
    return out


def _least_squares(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients and their standard errors (zero when the fit is exact or square)."""
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    dof = x.shape[0] - x.shape[1]
    resid = y - x @ coef
    s2 = float(resid @ resid) / dof if dof > 0 else 0.0
    cov = s2 * np.linalg.pinv(x.T @ x)
    return coef, np.sqrt(np.clip(np.diag(cov), 0.0, None))

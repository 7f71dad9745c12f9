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

The engine schedules in one of two ways:

* **chunked prefill** (``chunked_prefill=True``, the default, as in vLLM V1, SGLang and
  TensorRT-LLM): each step first carries one token of every decoding sequence, then spends the
  rest of the token budget (``token_budget``, vLLM's ``max_num_batched_tokens``) on prompts,
  the partly prefilled ones first, then new ones from the head of the queue, cutting the last
  prompt to what is left of the budget. This is the order of vLLM's
  ``vllm/v1/core/sched/scheduler.py``, ``Scheduler.schedule``: the running requests first (each
  decode one token, a partial prefill ``min(its remaining tokens, the budget left)``), then the
  waiting ones while the budget lasts. A prompt's first token appears at the end of the step
  that computes its last chunk;
* **separate passes** (``chunked_prefill=False``, vLLM V0's default, removed with V0 in vLLM
  0.11): a **prefill pass** takes the waiting prompts in arrival order while they fit the token
  budget (a prompt larger than it runs alone), the batch and the free cache, lasting
  ``prefill_pass_s`` (the step above with b = 0 and its own floor), and stamps each request's
  first token when it ends; otherwise a **decode step** (P = 0) advances every running sequence
  by one token.

A request is admitted while the batch has room and its prompt (and what it had produced, if it
was preempted) plus one token fits the free cache. vLLM V0 also kept a **watermark** of 1 % of
the blocks free at every admission (``BlockSpaceManager.can_allocate``, vllm/core/block_manager.py);
V1's ``KVCacheManager`` keeps none, so the watermark is 0 with chunked prefill and V0's 1 % with
separate passes unless ``watermark`` says otherwise. When
the next step would still overflow the cache, the newest running sequence is **preempted**: its
cache is dropped and it goes back to the head of the queue, to be prefilled again over its prompt
and the tokens it had produced (vLLM's recompute preemption). A request whose prompt and answer
cannot fit in the cache less the watermark is **rejected** on arrival and counted. A share
``prefix_hit`` of each prompt can be found already in the cache (prefix caching): those tokens
take cache but no compute. Per request the simulator records arrival, first token and last
token (TTFT, TPOT = (end − first token)/(output − 1) and latency follow) and preemptions.

Speed
-----
Between two events (an admission, a prefill chunk, a completion, a preemption, an arrival that
finds room) the batch is constant and its context grows by b tokens a step, so the step times
form an arithmetic series: the simulator jumps over whole runs of decode steps with its
closed-form sum. The cost is a few heap operations per request and one loop turn per step that
carries prompt tokens, not one loop turn per token.
"""

from __future__ import annotations

import heapq
import math
import warnings
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.serving import roofline

GiB = 2**30

TOKEN_BUDGET = 2048
"""vLLM V1's default ``max_num_batched_tokens`` for its OpenAI server on an A100 or a card under
70 GiB (``EngineArgs.get_batch_defaults``, vllm/engine/arg_utils.py): the most tokens one step
carries. ``engine_defaults`` gives the larger one of the other cards."""

DEFAULT_BATCH = 256
"""vLLM V1's default ``max_num_seqs`` for its OpenAI server on an A100 or a card under 70 GiB
(``EngineArgs.get_batch_defaults``, beside the token budget)."""

LARGE_CARD_DEFAULTS = (1024, 8192)
"""vLLM V1's ``max_num_seqs`` and ``max_num_batched_tokens`` for its OpenAI server on a card of
70 GiB or more whose name does not say A100 (H100, H200, MI300X): ``get_batch_defaults`` sets
them "for GPUs like H100 and MI300x" and keeps the A100 on the small ones, since a large budget
lowered its throughput (vLLM PR #17885)."""

WATERMARK = 0.01
"""vLLM V0's admission watermark: the share of KV-cache blocks an admission kept free
(``watermark=0.01`` of ``BlockSpaceManager``, vllm/core/block_manager.py). V1 keeps none; the
replica applies it to separate prefill passes, V0's scheduling, only."""


def engine_defaults(gpu: GPU | str) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) that vLLM V1's OpenAI server sets on ``gpu``.

    >>> engine_defaults("h100-sxm"), engine_defaults("a100-80gb"), engine_defaults("l40s")
    ((1024, 8192), (256, 2048), (256, 2048))
    """
    card = GPUS[gpu] if isinstance(gpu, str) else gpu
    if card.memory_bytes >= 70 * GiB and "a100" not in card.name.lower():
        return LARGE_CARD_DEFAULTS
    return DEFAULT_BATCH, TOKEN_BUDGET


DTYPE_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0}
"""Bytes per value of the weight and KV-cache types ``--dtype`` and ``--kv-dtype`` take."""


@dataclass(frozen=True)
class ModelShape:
    """The shape of a transformer, as far as serving cares."""

    name: str
    params: float
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    bytes_per_param: float = 2.0
    bytes_per_kv_value: float = 2.0

    dtype: str = "bf16"
    """The weights' type: "bf16" (or "fp16") at 2 bytes, "fp8" at 1 (its matrix products on the
    GPU's FP8 tensor cores where it has them, weight-only otherwise)."""

    def __post_init__(self):
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPE_BYTES)}, got {self.dtype!r}")

    @property
    def weight_bytes(self) -> float:
        return self.params * self.bytes_per_param

    @property
    def attention_width(self) -> float:
        """d_att = layers × hidden: each query token does 4 d_att FLOP per token it attends to
        (QKᵀ and the weighted sum of V, 2 FLOP a multiply-add, over the query heads' width)."""
        return float(self.layers * self.hidden)

    def with_dtype(self, dtype: str | None = None, kv_dtype: str | None = None) -> ModelShape:
        """The same model with its weights (``dtype``) and KV cache (``kv_dtype``) stored as
        "bf16", "fp16" or "fp8"; None keeps what it has."""
        from dataclasses import replace

        changes = {}
        for name, value, field_ in (
            ("dtype", dtype, "bytes_per_param"),
            ("kv_dtype", kv_dtype, "bytes_per_kv_value"),
        ):
            if value is None:
                continue
            if value not in DTYPE_BYTES:
                raise ValueError(f"{name} must be one of {', '.join(DTYPE_BYTES)}, got {value!r}")
            changes[field_] = DTYPE_BYTES[value]
        if dtype is not None:
            changes["dtype"] = dtype
        return replace(self, **changes) if changes else self

    @property
    def kv_bytes_per_token(self) -> float:
        return roofline.kv_bytes_per_token(
            self.layers, self.kv_heads, self.head_dim, self.bytes_per_kv_value
        )


@dataclass(frozen=True)
class GPU:
    """A GPU's datasheet: memory, memory bandwidth, dense 16-bit FLOP/s, and its link."""

    name: str
    memory_bytes: float
    bandwidth: float
    flops: float
    link_bandwidth: float
    """Bytes/s one way over NVLink, for the all-reduces of tensor parallelism."""
    price_per_hour: float | None = None
    """On-demand list price of one GPU-hour (``GPU_PRICES_DATED`` says where and when), or None."""
    currency: str = "USD"
    fp8_flops: float | None = None
    """Dense FP8 FLOP/s of its tensor cores; None for a card without them (the A100), where FP8
    weights are only stored in 8 bits and multiplied at the 16-bit rate."""

    def flops_for(self, dtype: str) -> float:
        """The dense peak a model stored as ``dtype`` computes at on this card."""
        if dtype == "fp8" and self.fp8_flops:
            return self.fp8_flops
        return self.flops


MODELS = {
    # Meta's Llama 3 model card: 8B has 32 layers, hidden 4096, 8 KV heads of 128; 70B has 80
    # layers, hidden 8192, 8 KV heads of 128 (grouped-query attention)
    "llama-3-8b": ModelShape("Llama-3-8B", 8.03e9, 32, 8, 128, 4096),
    "llama-3-70b": ModelShape("Llama-3-70B", 70.6e9, 80, 8, 128, 8192),
    # Llama 3.1 8B and Llama 3.3 70B keep the shapes of Llama 3 (their model cards: the same
    # layers, widths and grouped-query heads; a longer context only)
    "llama-3.1-8b": ModelShape("Llama-3.1-8B", 8.03e9, 32, 8, 128, 4096),
    "llama-3.3-70b": ModelShape("Llama-3.3-70B", 70.6e9, 80, 8, 128, 8192),
    # Llama 2's config.json: 7B has 32 layers, hidden 4096 and 32 KV heads of 128 (no grouped
    # queries); 13B has 40 layers, hidden 5120, 40 KV heads of 128
    "llama-2-7b": ModelShape("Llama-2-7B", 6.74e9, 32, 32, 128, 4096),
    "llama-2-13b": ModelShape("Llama-2-13B", 13.0e9, 40, 40, 128, 5120),
    "example-8b": ModelShape(
        "the running example's 8 B model",
        EXAMPLE.params,
        EXAMPLE.layers,
        EXAMPLE.kv_heads,
        EXAMPLE.head_dim,
        4096,
        EXAMPLE.bytes_per_param,
        EXAMPLE.bytes_per_param,
    ),
}
"""Model shapes by name."""

GPUS = {
    # NVIDIA A100 datasheet (80 GB SXM): 2,039 GB/s HBM2e, 312 TFLOP/s dense BF16, NVLink 600 GB/s
    # both ways; H100 SXM datasheet: 3.35 TB/s HBM3, 989 TFLOP/s dense BF16, NVLink 900 GB/s.
    # The A100's "80 GB" is 80 GiB (nvidia-smi reports 81,920 MiB). The H100's memory is what
    # vLLM's own memory profile reports as total_gpu_memory, 79.22 GiB (vLLM PR #10511, Llama-3-8B
    # on one H100; nvidia-smi says 81,559 MiB, of which the driver keeps some): that is what
    # gpu_memory_utilization takes a share of. Bandwidths and FLOP/s are decimal, as sold; the
    # H100's dense FP8 peak is 1,979 TFLOP/s (3,958 is with sparsity)
    "a100-80gb": GPU("A100 80GB SXM", 80 * GiB, 2.039e12, 312e12, 300e9, 1.99),
    "h100-sxm": GPU("H100 SXM 80GB", 79.22 * GiB, 3.35e12, 989e12, 450e9, 3.24, fp8_flops=1979e12),
    # NVIDIA H200 datasheet (SXM): 141 GB HBM3e at 4.8 TB/s, the H100's 989 TFLOP/s dense BF16
    # and FP8 1,979 TFLOP/s, NVLink 900 GB/s both ways; nvidia-smi reports 143,771 MiB. L40S
    # datasheet: 48 GB GDDR6 with ECC at 864 GB/s, 362 TFLOP/s dense BF16 (733 is with sparsity)
    # and 733 dense FP8, no NVLink: its all-reduces cross PCIe Gen4 x16, 64 GB/s both ways;
    # nvidia-smi reports 46,068 MiB
    "h200-sxm": GPU(
        "H200 SXM 141GB", 143_771 * 2**20, 4.8e12, 989e12, 450e9, 3.79, fp8_flops=1979e12
    ),
    "l40s": GPU("L40S 48GB", 46_068 * 2**20, 0.864e12, 362e12, 32e9, 0.99, fp8_flops=733e12),
    "example": GPU(
        "the running example's GPU",
        80e9,
        EXAMPLE.peak_bandwidth,
        EXAMPLE.peak_flops,
        300e9,
        EXAMPLE.price_per_hour,
        "€",
    ),
}
"""GPU datasheets by name."""

GPU_PRICES_DATED = (
    "on-demand price of one GPU-hour in USD, early 2026: the middle of the range listed for "
    "Lambda, CoreWeave, vast.ai and RunPod in 'H100 vs A100 Cloud Pricing' (pricegpu.pages.dev, "
    "2026): A100 80GB SXM 1.49-2.49, H100 SXM 2.49-3.99; H200 SXM and L40S at the middle of "
    "the same providers' listings seen in 2025-26 (H200 about 3.2-4.4, L40S about 0.8-1.2), "
    "approximate; hyperscalers charge more (AWS "
    "p5.48xlarge, 8 x H100, 98.32 USD an hour before its 2026 cut). Prices move: pass your own"
)
"""Where the catalogue's GPU prices come from, and when."""

# The running example: the source's 8 B model decodes 64 sequences of 2,000 tokens of context in
# 25 ms a step (40 tokens/s each). On its 3 TB/s GPU that is the bandwidth efficiency (MBU)
# below; its prefill reaches half of the peak FLOP/s.
_SPEC_FIELDS = {
    "model": {
        "params": float,
        "layers": int,
        "kv_heads": int,
        "head_dim": int,
        "hidden": int,
        "bytes_per_param": float,
        "bytes_per_kv_value": float,
    },
    "gpu": dict.fromkeys(
        ("memory_bytes", "bandwidth", "flops", "link_bandwidth", "price_per_hour", "fp8_flops"),
        float,
    ),
}


def from_text(kind: str, text: str):
    """A model shape (``kind`` "model") or a GPU ("gpu") by its catalogue name, or spelled out
    as key=value,key=value (the dataclass's fields; those without a default are required).
    Errors name the kind and the key: ``gpu: bandwidth must be a number, got 'x'``."""
    if kind not in _SPEC_FIELDS:
        raise ValueError(f"kind must be 'model' or 'gpu', got {kind!r}")
    names, cls, fields = (
        (MODELS, ModelShape, _SPEC_FIELDS["model"])
        if kind == "model"
        else (GPUS, GPU, _SPEC_FIELDS["gpu"])
    )
    if "=" not in text:
        if text not in names:
            raise ValueError(
                f"{kind}: unknown name {text!r}; known: {', '.join(sorted(names))}, "
                f"or key=value pairs ({', '.join(fields)})"
            )
        return names[text]
    values = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in fields:
            raise ValueError(f"{kind}: unknown key {key!r}; allowed: {', '.join(fields)}")
        try:
            values[key] = fields[key](float(value))
        except ValueError:
            raise ValueError(f"{kind}: {key} must be a number, got {value!r}") from None
        if not values[key] > 0:
            raise ValueError(f"{kind}: {key} must be > 0, got {value}")
    try:
        return cls(name=f"{kind} {text}", **values)
    except TypeError as err:  # a required field left out
        raise ValueError(f"{kind}: {err}") from None


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
    """M_w: bytes of weights read at every step (all GPUs together)."""
    kv_bytes_per_token: float = MODELS["example-8b"].kv_bytes_per_token
    """m_kv: KV-cache bytes per token of context (keys and values, every layer)."""
    params: float = EXAMPLE.params
    """N_p: parameters (prefill FLOP = 2 N_p per prompt token)."""
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
    gpu_price_per_hour: float | None = EXAMPLE.price_per_hour
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
    source: str = field(default="the running example", compare=False)
    """Where its numbers come from: the running example, a datasheet, or a fit to measurements
    (the planner's report says which)."""

    def __post_init__(self):
        _check.integer("batch", self.batch, minimum=1)
        _check.integer("token_budget", self.token_budget, minimum=1)
        _check.integer("gpus", self.gpus, minimum=1)
        if self.gpu_price_per_hour is not None:
            _check.positive("gpu_price_per_hour", self.gpu_price_per_hour)
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

    # ------------------------------------------------------------------ the two passes

    def _fixed_s(self, b, tokens, floor):
        """The step's fixed work: its floor, t_seq per decoded sequence and the all-reduces over
        the tokens it carries (none when it carries none)."""
        return (
            floor
            + self.seq_step_s * b
            + np.where(tokens > 0, self.comm_fixed_s + self.comm_per_sequence_s * tokens, 0.0)
        )

    def _linear_s(self, tokens):
        """The linear layers over ``tokens`` tokens: the weights' read or their arithmetic,
        whichever is longer."""
        return np.maximum(
            2 * self.params * tokens / self.prefill_flops, self.weight_bytes / self.bandwidth
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
    def price_per_hour(self) -> float | None:
        """Price of a replica-hour: GPUs × price of a GPU-hour (None when the price is unknown)."""
        if self.gpu_price_per_hour is None:
            return None
        return self.gpus * self.gpu_price_per_hour

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

    def raw_capacity_rps(self, output_tokens: float, prompt_tokens: float | None = None) -> float:
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
            params=shape.params,
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
            gpu_price_per_hour=card.price_per_hour,
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
                (1.0, shape.weight_bytes + b * c * shape.kv_bytes_per_token, float(b))
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
                (1.0, 2 * shape.params * p + 2 * shape.attention_width * p * (p + 1))
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
        kwargs.setdefault("gpu_price_per_hour", None)
        kwargs.setdefault("currency", "")
        kwargs.setdefault("source", "fitted to measured TPOT and TTFT points")
        fitted = cls(
            weight_bytes=shape.weight_bytes,
            kv_bytes_per_token=shape.kv_bytes_per_token,
            params=shape.params,
            bandwidth=1 / per_byte,
            step_floor_s=floor,
            seq_step_s=per_seq,
            prefill_flops=1 / per_flop,
            prefill_floor_s=p_floor,
            attention_width=shape.attention_width,
            **kwargs,
        )
        return fitted, notes


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


@dataclass(frozen=True)
class Trace:
    """Per-request times of one run, in arrival order (seconds)."""

    arrival: np.ndarray = field(repr=False)
    first_token: np.ndarray = field(repr=False)
    end: np.ndarray = field(repr=False)
    prompt: np.ndarray = field(repr=False)
    output: np.ndarray = field(repr=False)
    preemptions: np.ndarray | None = field(default=None, repr=False)
    """Times each request was preempted and recomputed (zeros when not recorded)."""
    rejected: np.ndarray | None = field(default=None, repr=False)
    """True for requests that could never fit the KV cache and were turned away."""

    def __post_init__(self):
        n = np.asarray(self.arrival).size
        if self.preemptions is None:
            object.__setattr__(self, "preemptions", np.zeros(n, dtype=int))
        if self.rejected is None:
            object.__setattr__(self, "rejected", np.zeros(n, dtype=bool))

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
        """True for requests that meet both SLOs: TTFT ≤ τ_TTFT and TPOT ≤ τ_TPOT (a rejected
        request meets neither)."""
        _check.positive("ttft_slo_s", ttft_slo_s)
        _check.positive("tpot_slo_s", tpot_slo_s)
        return (self.ttft <= ttft_slo_s) & (self.tpot <= tpot_slo_s) & ~self.rejected

    def window(self, skip: int) -> Trace:
        """The trace without its first ``skip`` requests (the warm-up)."""
        skip = _check.integer("skip", skip, minimum=0)
        if skip >= self.arrival.size:
            raise ValueError(
                f"skip must be < the number of requests ({self.arrival.size}), got {skip}"
            )
        sl = slice(skip, None)
        return Trace(
            self.arrival[sl],
            self.first_token[sl],
            self.end[sl],
            self.prompt[sl],
            self.output[sl],
            self.preemptions[sl],
            self.rejected[sl],
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
    times = arrival.tolist()
    # the separate-pass loop reads arrivals from a heap; sorted, the list is one already
    incoming = [] if model.chunked_prefill else [(t, i) for i, t in enumerate(times)]
    return _Engine(model, incoming, prompt, output, arrival.size, think=None, times=times).run()


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
    return _Engine(model, incoming, prompt, output, n, think=think.tolist()).run()


class _Engine:
    """The event loop shared by both load generators.

    ``incoming`` is a heap of (time, key) not yet arrived. Requests are numbered in arrival
    order; in the closed loop, key = −1 − user, and a completion sends that user's next request.
    A running sequence i admitted at decode-step count s_i with g_i tokens already produced has
    produced g_i + (steps − s_i) tokens; its cache holds prompt_i plus those tokens.
    """

    def __init__(self, model, incoming, prompt, output, n, think, times=None):
        self.m = model
        self.incoming = incoming
        self.times = times
        """An open loop's arrival times, sorted (the chunked loop reads them by index)."""
        self.lengths = (prompt[:n], output[:n])
        """The lengths as arrays (``_lengths``'s own copies), for the trace."""
        self.prompt = prompt[:n].tolist()
        self.output = output[:n].tolist()
        self.n = n
        self.think = think
        self.arrival = [0.0] * n
        self.first = [math.nan] * n
        self.end = [math.nan] * n
        self.user_of = [0] * n
        self.produced = [0] * n  # tokens produced when last admitted (or preempted)
        self.admit_step = [0] * n
        self.preempted = [0] * n
        self.rejected = [False] * n
        self.hit = model.prefix_hit_tokens(prompt[:n]).tolist() if model.prefix_hit else [0] * n

    def _costs(self) -> tuple[float, float, float, float]:
        """The step's rates, as ``step_s`` uses them: seconds per token of cache read, the
        weights' read, a token's linear layers computed, and a prompt position attended."""
        m = self.m
        return (
            m.cache_s_per_token,
            m.weight_bytes / m.bandwidth,
            2 * m.params / m.prefill_flops,
            4 * m.attention_width / m.prefill_flops,
        )

    def run(self) -> Trace:
        if self.m.chunked_prefill:
            return self._run_chunked()
        m, n = self.m, self.n
        B, K, budget = m.batch, m.kv_capacity_tokens, m.token_budget
        room = K - m.watermark_tokens  # the cache an admission may fill
        finite = not math.isinf(K)
        hit = self.hit
        mkv_bw, weights_s, per_token, per_attended = self._costs()
        # a separate pass, as prefill_pass_s: floor, all-reduces, linear layers, attention
        prefill_floor = m.prefill_floor_s + m.comm_fixed_s
        prefill_per_token = m.comm_per_sequence_s
        base = m.step_floor_s
        pop, push = heapq.heappop, heapq.heappush
        prompt, output, produced = self.prompt, self.output, self.produced
        incoming, think, user_of = self.incoming, self.think, self.user_of
        arrival_at, first, end = self.arrival, self.first, self.end
        admit_step = self.admit_step
        base_comm = base + m.comm_fixed_s  # the parts of a decode step every sequence shares
        per_seq = m.comm_per_sequence_s + m.seq_step_s

        t = 0.0
        steps = 0
        arrived = 0
        finished = 0
        waiting: deque = deque()
        running: list = []  # heap of (finish step, i)
        order: list = []  # running requests in admission order (the newest last)
        cached = 0  # tokens in the KV cache

        def finish(i: int, now: float) -> None:
            nonlocal finished
            end[i] = now
            finished += 1
            if think is not None:  # the user sends again; past the n-th never admitted
                push(incoming, (now + think[i], -1 - user_of[i]))

        while finished < n:
            while arrived < n and incoming and incoming[0][0] <= t:
                when, key = pop(incoming)
                i = arrived
                arrived += 1
                arrival_at[i] = when
                user_of[i] = -1 - key
                if prompt[i] + output[i] > room:  # could never fit the cache: turned away
                    self.rejected[i] = True
                    first[i] = when
                    finish(i, when)
                else:
                    waiting.append(i)
            b = len(order)
            if waiting and b < B:
                take, tokens, computed, attended = [], 0, 0, 0
                while waiting and b + len(take) < B:
                    j = waiting[0]
                    need = prompt[j] + produced[j]
                    work = max(need - hit[j], 1)
                    if take and computed + work > budget:
                        break
                    if cached + tokens + len(take) + need + 1 > room:  # prompts and new tokens
                        break
                    take.append(waiting.popleft())
                    tokens += need
                    computed += work
                    start = need - work  # the positions it computes: start + 1 ... need
                    attended += (need * (need + 1) - start * (start + 1)) // 2
                if take:
                    linear = per_token * computed
                    t += (
                        prefill_floor
                        + prefill_per_token * computed
                        + (linear if linear > weights_s else weights_s)
                        + per_attended * attended
                    )
                    cached += tokens
                    for j in take:
                        produced[j] += 1  # the pass produces each request's next token
                        cached += 1
                        if first[j] != first[j]:  # nan: its first token
                            first[j] = t
                        if produced[j] >= output[j]:
                            cached -= prompt[j] + produced[j]
                            finish(j, t)
                        else:
                            admit_step[j] = steps
                            push(running, (steps + output[j] - produced[j], j))
                            order.append(j)
                    continue
            if not order:  # idle (an empty engine admits any request that was not rejected)
                if waiting:
                    raise RuntimeError("a request that fits the cache was not admitted")
                if arrived < n and incoming:
                    t = max(t, incoming[0][0])
                    continue
                break
            # the next decode step must fit: preempt the newest sequences until it does
            while cached + len(order) > K:
                j = order.pop()
                done = produced[j] + steps - admit_step[j]
                cached -= prompt[j] + done
                produced[j] = done
                self.preempted[j] += 1
                waiting.appendleft(j)
                running = [(s, i) for s, i in running if i != j]
                heapq.heapify(running)
            b = len(order)
            linear = per_token * b
            a = (
                base_comm
                + per_seq * b
                + (linear if linear > weights_s else weights_s)
                + cached * mkv_bw
            )
            c = b * mkv_bw  # each step reads b more tokens of cache than the one before
            k = running[0][0] - steps  # steps to the next completion
            if finite and (K - cached) // b < k:
                k = int((K - cached) // b)
            if k < 1:
                k = 1
            span = k * a + c * k * (k - 1) / 2  # the k steps' time
            if b < B and arrived < n and incoming and span >= incoming[0][0] - t:
                # the next arrival comes within them: stop at the first step that reaches it
                k = _steps_until(incoming[0][0] - t, a, c)
                span = k * a + c * k * (k - 1) / 2
            t += span
            steps += k
            cached += k * b
            while running and running[0][0] <= steps:
                _, j = pop(running)
                order.remove(j)
                cached -= prompt[j] + output[j]
                produced[j] = output[j]
                finish(j, t)

        return self._trace(arrived)

    def _trace(self, done: int) -> Trace:
        def floats(values):
            return np.fromiter(values, dtype=float, count=done)

        return Trace(
            floats(self.arrival[:done]),
            floats(self.first[:done]),
            floats(self.end[:done]),
            self.lengths[0][:done],
            self.lengths[1][:done],
            np.fromiter(self.preempted[:done], dtype=np.int64, count=done),
            np.fromiter(self.rejected[:done], dtype=bool, count=done),
        )

    def _run_chunked(self) -> Trace:
        """Chunked prefill: every step carries the decodes, then prompt chunks under the budget.

        Steps that carry prompt tokens are taken one at a time; runs of pure decode steps are
        jumped over as in separate-pass mode. ``filling`` holds the admitted sequences whose
        prompt is not computed yet, in admission order, with ``left`` tokens to go; their cache
        (prompt and recomputed tokens) is taken whole when they are admitted. Chunks go to
        ``filling`` from its head, so the prompts a step completes are always at its head.
        """
        m, n = self.m, self.n
        B, K, budget = m.batch, m.kv_capacity_tokens, m.token_budget
        room = K - m.watermark_tokens
        finite = not math.isinf(K)
        hit = self.hit
        mkv_bw, weights_s, per_token, per_attended = self._costs()
        base = m.step_floor_s + m.comm_fixed_s
        comm_per_token = m.comm_per_sequence_s
        per_seq = m.comm_per_sequence_s + m.seq_step_s
        pop, push, sqrt, ceil = heapq.heappop, heapq.heappush, math.sqrt, math.ceil
        prompt, output, produced = self.prompt, self.output, self.produced
        incoming, think, user_of = self.incoming, self.think, self.user_of
        arrival_at, first, end = self.arrival, self.first, self.end
        admit_step, preempted = self.admit_step, self.preempted
        left = [0] * n
        full = [0] * n  # the positions a sequence's prefill ends at: its prompt and recomputed
        inf = math.inf
        # the next arrival's time: read off the sorted times of an open loop, or the heap's head
        # in a closed loop (where a completion can bring one forward)
        times = self.times if think is None else None
        nxt = (times[0] if times else inf) if think is None else incoming[0][0]

        t = 0.0
        steps = 0
        arrived = 0
        finished = 0
        waiting: deque = deque()
        running: list = []  # heap of (finish step, i) of the decoding sequences
        order: list = []  # admitted sequences in admission order (the newest last)
        filling: deque = deque()  # admitted sequences still prefilling, in admission order
        cached = 0
        decoding = 0  # len(order) - len(filling): the sequences a step decodes
        soonest = inf  # running[0][0]: the step at which the next decoding sequence finishes
        pending = 0  # prompt tokens ``filling`` has still to compute: the sum of its ``left``

        def finish(i: int, now: float) -> None:
            nonlocal nxt
            end[i] = now
            if think is not None:  # the user sends again after its think time
                when = now + think[i]
                push(incoming, (when, -1 - user_of[i]))
                if arrived < n and when < nxt:
                    nxt = when

        while finished < n:
            while nxt <= t:
                i = arrived
                arrived += 1
                if times is not None:
                    when = nxt
                    user_of[i] = -1 - i
                    nxt = times[arrived] if arrived < n else inf
                else:
                    when, key = pop(incoming)
                    user_of[i] = -1 - key
                    nxt = incoming[0][0] if arrived < n and incoming else inf
                arrival_at[i] = when
                if prompt[i] + output[i] > room:  # could never fit the cache: turned away
                    self.rejected[i] = True
                    first[i] = when
                    finish(i, when)
                    finished += 1
                else:
                    waiting.append(i)
            while cached + decoding > K:  # the decodes of the next step must fit: preempt
                j = order.pop()
                if filling and filling[-1] == j:  # still prefilling: its progress is lost
                    filling.pop()
                    pending -= left[j]
                    cached -= prompt[j] + produced[j]
                else:
                    done = produced[j] + steps - admit_step[j]
                    cached -= prompt[j] + done
                    produced[j] = done
                    running = [(s, i) for s, i in running if i != j]
                    heapq.heapify(running)
                    soonest = running[0][0] if running else inf
                    decoding -= 1
                preempted[j] += 1
                waiting.appendleft(j)
            # the prompt tokens of the step: the partial prefills first, then the queue's head,
            # in admission order, so they always go to ``filling`` from its head
            room_left = budget - decoding
            if waiting and len(order) < B and pending < room_left:
                spare = room_left - pending
                while spare > 0 and waiting and len(order) < B:
                    j = waiting[0]
                    need = prompt[j] + produced[j]
                    if cached + decoding + need + 1 > room:
                        break
                    waiting.popleft()
                    cached += need
                    full[j] = need
                    work = need - hit[j]
                    left[j] = work = work if work > 1 else 1
                    pending += work
                    order.append(j)
                    filling.append(j)
                    spare -= work
            tokens = pending if pending < room_left else room_left
            if tokens:
                # hand the chunks out from the head of ``filling``: each computes the next
                # positions of its prompt, attending to every position up to its own
                pending -= tokens
                rest, attended, ended = tokens, 0, 0
                for j in filling:
                    lj = left[j]
                    c = lj if lj < rest else rest
                    attended += c * (full[j] - lj) + c * (c + 1) // 2
                    if lj > rest:  # only the last chunk can leave a prompt unfinished
                        left[j] = lj - rest
                        break
                    left[j] = 0
                    ended += 1
                    rest -= lj
                    if not rest:
                        break
                linear = per_token * (decoding + tokens)
                t += (
                    base
                    + cached * mkv_bw
                    + per_seq * decoding
                    + comm_per_token * tokens
                    + (linear if linear > weights_s else weights_s)
                    + per_attended * attended
                )
                steps += 1
                cached += decoding
                for _ in range(ended):
                    j = filling.popleft()
                    produced[j] += 1  # the step that ends a prompt samples its next token
                    cached += 1
                    if first[j] != first[j]:
                        first[j] = t
                    if produced[j] >= output[j]:
                        order.remove(j)
                        cached -= prompt[j] + produced[j]
                        finish(j, t)
                        finished += 1
                    else:
                        decoding += 1
                        admit_step[j] = steps
                        done = steps + output[j] - produced[j]
                        push(running, (done, j))
                        if done < soonest:
                            soonest = done
            elif order:
                # a run of pure decode steps, up to the next completion, the cache's end, or the
                # next arrival that could be admitted (none can while others wait: the cache only
                # fills until a completion)
                linear = per_token * decoding
                a = (
                    base
                    + per_seq * decoding
                    + (linear if linear > weights_s else weights_s)
                    + cached * mkv_bw
                )
                c = decoding * mkv_bw
                k = soonest - steps
                if finite and (K - cached) // decoding < k:
                    k = int((K - cached) // decoding)
                if k < 1:
                    k = 1
                span = k * a + c * k * (k - 1) / 2  # the k steps' time
                if decoding < B and not waiting and nxt < inf and span >= nxt - t:
                    # the next arrival comes within them: stop at the first step that reaches it
                    dt = nxt - t
                    if dt <= 0:
                        k = 1
                    else:  # ``_steps_until`` written out: a call here costs the loop ~8 %
                        h = a - c / 2
                        k = ceil((-h + sqrt(h * h + 2 * c * dt)) / c) if c > 0 else ceil(dt / a)
                        while k > 1 and (k - 1) * a + c * (k - 1) * (k - 2) / 2 >= dt:
                            k -= 1
                        while k * a + c * k * (k - 1) / 2 < dt:
                            k += 1
                    span = k * a + c * k * (k - 1) / 2
                t += span
                steps += k
                cached += k * decoding
            else:  # idle
                if waiting:
                    raise RuntimeError("a request that fits the cache was not admitted")
                if nxt < inf:
                    if nxt > t:
                        t = nxt
                    continue
                break
            while soonest <= steps:
                j = pop(running)[1]
                soonest = running[0][0] if running else inf
                order.remove(j)
                decoding -= 1
                cached -= prompt[j] + output[j]
                produced[j] = output[j]
                finish(j, t)
                finished += 1
        return self._trace(arrived)


def _steps_until(dt: float, a: float, c: float) -> int:
    """The fewest steps (at least 1) whose durations a, a + c, a + 2c, ... add up to ≥ dt."""
    if dt <= 0:
        return 1
    if c <= 0:
        k = math.ceil(dt / a)
    else:  # a k + c k (k − 1)/2 ≥ dt
        k = math.ceil((-(a - c / 2) + math.sqrt((a - c / 2) ** 2 + 2 * c * dt)) / c)
    k = max(k, 1)
    while k > 1 and (k - 1) * a + c * (k - 1) * (k - 2) / 2 >= dt:
        k -= 1
    while k * a + c * k * (k - 1) / 2 < dt:
        k += 1
    return k

"""The catalogue: model shapes and GPU datasheets by name, their prices, vLLM's defaults by card,
and the reader's own spelled out as key=value pairs (``from_text``).

It imports nothing but the running example, so the command line builds its help and its choices
from it without loading numpy or sympy (tested in a fresh process). A model's KV bytes per token
is the roofline's formula, imported when it is first asked for.

Layer: serving.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from replicaplan.core.example import EXAMPLE

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


def check_mixture(experts, per_token, part: tuple[str, float], whole: tuple[str, float]) -> None:
    """Refuse a mixture of experts that cannot be: E experts (a whole number >= 2), k of them per
    token (1 <= k < E), and the experts' ``part`` (parameters or bytes, by name and value) more
    than 0 and less than the ``whole`` model. All three at 0 is a dense model."""
    (part_name, part_value), (whole_name, whole_value) = part, whole
    if not (experts or per_token or part_value):
        return
    if not (
        isinstance(experts, int)
        and isinstance(per_token, int)
        and 1 <= per_token < experts
        and 0 < part_value < whole_value
    ):
        raise ValueError(
            f"a mixture of experts needs experts E >= 2, experts_per_token k with 1 <= k < E "
            f"and {part_name} between 0 and {whole_name}, got E={experts!r}, k={per_token!r}, "
            f"{part_name}={part_value!r}"
        )


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
    repo: str | None = None
    """The model's Hugging Face repository, the name ``vllm serve`` loads (None when unknown)."""
    max_context: int | None = None
    """The longest sequence it was trained for (``max_position_embeddings``), the most a
    server's ``max_model_len`` may be; None when unknown."""
    experts: int = 0
    """E: routed experts of each mixture-of-experts layer (``num_local_experts``); 0 for a
    dense model."""
    experts_per_token: int = 0
    """k: the experts each token is routed to in each layer (``num_experts_per_tok``)."""
    expert_params: float = 0.0
    """Parameters of all the routed experts together, every layer (part of ``params``)."""

    def __post_init__(self):
        if self.dtype not in DTYPE_BYTES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPE_BYTES)}, got {self.dtype!r}")
        check_mixture(
            self.experts,
            self.experts_per_token,
            ("expert_params", self.expert_params),
            ("params", self.params),
        )

    @property
    def weight_bytes(self) -> float:
        """M_w: bytes of all the weights, what the GPUs' memory holds."""
        return self.params * self.bytes_per_param

    @property
    def active_params(self) -> float:
        """Parameters one token computes with: all but the experts it is not routed to,
        N_p − (1 − k/E) N_experts (``params`` for a dense model)."""
        if not self.experts:
            return self.params
        return self.params - (1 - self.experts_per_token / self.experts) * self.expert_params

    @property
    def expert_bytes(self) -> float:
        """Bytes of the routed experts (0 for a dense model)."""
        return self.expert_params * self.bytes_per_param

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
        from replicaplan.serving import roofline  # sympy: only when a model's cache is sized

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
    price_per_gpu_hour: float | None = None
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
    "llama-3-8b": ModelShape(
        "Llama-3-8B",
        8.03e9,
        32,
        8,
        128,
        4096,
        repo="meta-llama/Meta-Llama-3-8B-Instruct",
        max_context=8192,
    ),
    "llama-3-70b": ModelShape(
        "Llama-3-70B",
        70.6e9,
        80,
        8,
        128,
        8192,
        repo="meta-llama/Meta-Llama-3-70B-Instruct",
        max_context=8192,
    ),
    # Llama 3.1 8B and Llama 3.3 70B keep the shapes of Llama 3 (their model cards: the same
    # layers, widths and grouped-query heads; a longer context only: 128K tokens, 131,072 in
    # their config.json's max_position_embeddings, against Llama 3's 8,192 and Llama 2's 4,096)
    "llama-3.1-8b": ModelShape(
        "Llama-3.1-8B",
        8.03e9,
        32,
        8,
        128,
        4096,
        repo="meta-llama/Llama-3.1-8B-Instruct",
        max_context=131072,
    ),
    "llama-3.3-70b": ModelShape(
        "Llama-3.3-70B",
        70.6e9,
        80,
        8,
        128,
        8192,
        repo="meta-llama/Llama-3.3-70B-Instruct",
        max_context=131072,
    ),
    # Llama 2's config.json: 7B has 32 layers, hidden 4096 and 32 KV heads of 128 (no grouped
    # queries); 13B has 40 layers, hidden 5120, 40 KV heads of 128
    "llama-2-7b": ModelShape(
        "Llama-2-7B",
        6.74e9,
        32,
        32,
        128,
        4096,
        repo="meta-llama/Llama-2-7b-chat-hf",
        max_context=4096,
    ),
    "llama-2-13b": ModelShape(
        "Llama-2-13B",
        13.0e9,
        40,
        40,
        128,
        5120,
        repo="meta-llama/Llama-2-13b-chat-hf",
        max_context=4096,
    ),
    # Mixtral 8x7B, a mixture of experts: its config.json has 32 layers, hidden 4096, 8 KV heads
    # of 128 (32 query heads), and in each layer 8 experts (num_local_experts) of three
    # 4096 x 14,336 matrices (intermediate_size), 2 of them per token (num_experts_per_tok);
    # 32,768 positions. Mistral AI gives 46.7 B parameters in all and 12.9 B used per token
    # ("Mixtral of experts", 11 December 2023; Jiang et al. 2024 round them to 47 B and 13 B)
    "mixtral-8x7b": ModelShape(
        "Mixtral-8x7B",
        46.7e9,
        32,
        8,
        128,
        4096,
        repo="mistralai/Mixtral-8x7B-Instruct-v0.1",
        max_context=32768,
        experts=8,
        experts_per_token=2,
        expert_params=32 * 8 * 3 * 4096 * 14336,
    ),
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
    # NVIDIA H100 datasheet, PCIe column: 80 GB HBM2e at 2,000 GB/s, BF16 1,513 and FP8 3,026
    # TFLOPS with sparsity (dense: half), NVLink bridge 600 GB/s both ways; nvidia-smi reports
    # 81,559 MiB as on the SXM card, and PyTorch 79.19 GiB (a public model card trained on one).
    # NVIDIA L4 datasheet: 24 GB GDDR6 at 300 GB/s, BF16 242 and FP8 485 TFLOPS with sparsity,
    # no NVLink (PCIe Gen4 x16, 32 GB/s one way); nvidia-smi reports 23,034 MiB (public logs).
    # AMD Instinct MI300X datasheet: 192 GB HBM3 at 5.3 TB/s, dense BF16 1,307.4 and FP8
    # 2,614.9 TFLOPS, seven Infinity Fabric links of 64 GB/s one way to the other GPUs of an
    # 8-GPU board; torch.cuda.mem_get_info and rocm-smi report 205,822,885,888 bytes. No price:
    # these three are searched and planned with the price a reader passes (--gpu-price)
    "h100-pcie": GPU("H100 PCIe 80GB", 79.19 * GiB, 2.0e12, 756.5e12, 300e9, fp8_flops=1513e12),
    "l4": GPU("L4 24GB", 23_034 * 2**20, 0.3e12, 121e12, 32e9, fp8_flops=242.5e12),
    "mi300x": GPU(
        "Instinct MI300X 192GB", 205_822_885_888, 5.3e12, 1307.4e12, 448e9, fp8_flops=2614.9e12
    ),
    # NVIDIA's HGX B200 specifications, per GPU: 180 GB HBM3e at 7.7 TB/s, FP16/BF16 4.5 and
    # FP8 9 PFLOPS with sparsity (dense: half, 2.25 and 4.5, as Glenn Lockwood's B200 notes give
    # for the HGX part at 1,000 W), fifth-generation NVLink 1.8 TB/s both ways. The 180 GB are
    # taken as decimal bytes: what nvidia-smi reports on one was not found here, so its KV cache
    # may be a few per cent off. No price, as the three above
    "b200": GPU("B200 180GB (HGX)", 180e9, 7.7e12, 2.25e15, 900e9, fp8_flops=4.5e15),
    "example": GPU(
        "the running example's GPU",
        EXAMPLE.gpu_memory_bytes,
        EXAMPLE.peak_bandwidth,
        EXAMPLE.peak_flops,
        300e9,
        EXAMPLE.price_per_replica_hour,  # one GPU a replica: a GPU-hour is a replica-hour
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
MAX_COUNT = 1_000_000
"""The largest layer, head or width count a spelled-out model takes."""

_SPEC_FIELDS = {
    "model": {
        "params": float,
        "layers": int,
        "kv_heads": int,
        "head_dim": int,
        "hidden": int,
        "bytes_per_param": float,
        "bytes_per_kv_value": float,
        "experts": int,
        "experts_per_token": int,
        "expert_params": float,
    },
    "gpu": dict.fromkeys(
        ("memory_bytes", "bandwidth", "flops", "link_bandwidth", "price_per_gpu_hour", "fp8_flops"),
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
            x = float(value)
        except ValueError:
            x = math.nan
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"{kind}: {key} must be a finite number > 0, got {value!r}")
        if fields[key] is int:
            if x != int(x) or x > MAX_COUNT:
                raise ValueError(
                    f"{kind}: {key} must be a whole number from 1 to {MAX_COUNT:,}, got {value!r}"
                )
            x = int(x)
        values[key] = x
    try:
        return cls(name=f"{kind} {text}", **values)
    except (TypeError, ValueError) as err:  # a required field left out, or a bad mixture
        raise ValueError(f"{kind}: {err}") from None


def replica_hour_price(price_per_gpu_hour: float | None, gpus: int) -> float | None:
    """The price of one replica-hour: a replica pays each of its ``gpus`` GPU-hours (None when
    the GPU has no price). The one place a GPU-hour becomes a replica-hour.

    >>> replica_hour_price(3.24, 4)
    12.96
    """
    return None if price_per_gpu_hour is None else gpus * price_per_gpu_hour


def gpu_hour_price(price_per_replica_hour: float, gpus: int) -> float:
    """The price of one GPU-hour of a replica of ``gpus`` GPUs paid ``price_per_replica_hour``:
    ``replica_hour_price`` undone.

    >>> gpu_hour_price(12.96, 4)
    3.24
    """
    return price_per_replica_hour / gpus

"""What the serving engine is started with: the context it must accept, the configurations it
refuses to start, and the command that starts the one the planner chose.

vLLM checks its scheduler's settings when it starts (``SchedulerConfig._verify_args``,
vllm/config.py, vllm/config/scheduler.py in later releases) and stops with an error when

* ``max_num_batched_tokens`` < ``max_num_seqs`` (a step must carry one token of every running
  sequence), or
* ``max_num_batched_tokens`` < ``max_model_len`` without chunked prefill (a prompt of the
  longest accepted length must fit one step: "max_num_batched_tokens (2048) is smaller than
  max_model_len (8192)").

``max_model_len`` is set to the log's longest request (prompt and answer), rounded up to a
whole ``CONTEXT_STEP``: the server then accepts every request of the log, and a configuration
that could not start with it is refused by the search with vLLM's own reason.

Layer: planner.
"""

from __future__ import annotations

import math
import shlex

import numpy as np

from replicaplan.core.startup import Startup
from replicaplan.traffic.loadgen import LengthMix
from replicaplan.traffic.logs import TraceFile

CONTEXT_STEP = 1024
"""``max_model_len`` is the longest request rounded up to a multiple of this many tokens."""
MIX_SAMPLE = 20_000
"""Draws of a length mix (no log) whose longest request sets the context (seeded)."""


def max_model_len(lengths: TraceFile | LengthMix, limit: int | None = None) -> int:
    """The context the server must accept: the longest request of the log (prompt + answer;
    of ``MIX_SAMPLE`` draws for a mix), rounded up to a whole ``CONTEXT_STEP``, and at most
    ``limit`` (the model's ``max_context``: vLLM refuses a longer ``max_model_len``, and the
    log's longer requests would be refused by the server).

    >>> from replicaplan.traffic.logs import TraceFile
    >>> import numpy as np
    >>> max_model_len(TraceFile(np.zeros(2), np.array([100, 3000]), np.array([50, 200])))
    4096
    """
    if isinstance(lengths, TraceFile):
        longest = float(np.max(lengths.prompt + lengths.output))
    else:
        prompt, output = lengths.sample(MIX_SAMPLE, np.random.default_rng(0))
        longest = float(np.max(prompt + output))
    context = max(CONTEXT_STEP, math.ceil(longest / CONTEXT_STEP) * CONTEXT_STEP)
    return context if limit is None else min(context, limit)


def vllm_refusal(batch: int, token_budget: int, chunked: bool, context: int) -> str | None:
    """Why vLLM would refuse to start with these settings (None: it starts)."""
    if token_budget < batch:
        return (
            f"vLLM refuses to start: max_num_batched_tokens ({token_budget}) must be at least "
            f"max_num_seqs ({batch})"
        )
    if not chunked and token_budget < context:
        return (
            f"vLLM refuses to start: max_num_batched_tokens ({token_budget}) is smaller than "
            f"max_model_len ({context}) without chunked prefill"
        )
    return None


def vllm_command(
    model_id: str,
    served_model: str,
    *,
    gpus: int,
    batch: int,
    token_budget: int,
    chunked: bool,
    context: int,
    memory_utilization: float,
) -> str:
    """The ``vllm serve`` command line of a replica: the model, the name the queries select
    (``--served-model-name``), the tensor-parallel group, the batch cap and token budget, the
    prefill mode, the context and the memory share the plan assumed."""
    refusal = vllm_refusal(batch, token_budget, chunked, context)
    if refusal:
        raise ValueError(refusal)
    args = [
        "vllm",
        "serve",
        model_id,
        "--served-model-name",
        served_model,
        "--tensor-parallel-size",
        str(gpus),
        "--max-num-seqs",
        str(batch),
        "--max-num-batched-tokens",
        str(token_budget),
        "--max-model-len",
        str(context),
        "--gpu-memory-utilization",
        f"{memory_utilization:g}",
        "--enable-chunked-prefill" if chunked else "--no-enable-chunked-prefill",
    ]
    return shlex.join(args)


DEFAULT_IMAGE = "vllm/vllm-openai:latest"
"""The engine's image when none is given (pin a release in production: ``--image``)."""


def workload(
    model,
    shape,
    lengths: TraceFile | LengthMix,
    *,
    name: str,
    namespace: str,
    served_model: str,
    replicas: int,
    startup: Startup,
    image: str = DEFAULT_IMAGE,
) -> tuple[str, list[dict]]:
    """The server a plan's replica is started as: its ``vllm serve`` line and the two objects
    that run and scrape it (``workload.engine_deployment``, ``workload.pod_monitor``), with the
    replica's GPUs, batch cap, token budget and prefill mode, the log's context, the name the
    queries select and the start-up time the plan assumed."""
    from replicaplan.autoscalers.workload import engine_deployment, pod_monitor
    from replicaplan.serving.replica import MEMORY_UTILIZATION

    if shape.repo is None:
        raise ValueError(f"{shape.name} has no repository to load: name a model of the catalogue")
    line = vllm_command(
        shape.repo,
        served_model,
        gpus=model.gpus,
        batch=model.batch,
        token_budget=model.token_budget,
        chunked=model.chunked_prefill,
        context=max_model_len(lengths, shape.max_context),
        memory_utilization=MEMORY_UTILIZATION,
    )
    deployment = engine_deployment(
        name,
        namespace,
        image=image,
        serve_argv=shlex.split(line),
        gpus=model.gpus,
        replicas=replicas,
        startup_s=startup.seconds,
    )
    return line, [deployment, pod_monitor(name, namespace)]

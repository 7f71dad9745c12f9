"""The engine's launch settings (planner/server.py): the context the server must accept, the
settings vLLM refuses at start (its SchedulerConfig._verify_args), and the command line."""

import shlex

import numpy as np
import pytest

from replicaplan.planner import server
from replicaplan.serving.catalogue import MODELS
from replicaplan.traffic.loadgen import AZURE_CONVERSATION
from replicaplan.traffic.logs import TraceFile


def _log(prompt, output):
    return TraceFile(np.zeros(len(prompt)), np.array(prompt), np.array(output))


def test_the_context_is_the_longest_request_rounded_up_and_capped_by_the_model():
    assert server.max_model_len(_log([100, 3000], [50, 200])) == 4096  # 3,200 → 4,096
    assert server.max_model_len(_log([1000], [24])) == 1024  # exactly a step
    assert server.max_model_len(_log([10], [5])) == 1024  # at least one step
    assert server.max_model_len(_log([20_000], [500]), limit=8192) == 8192
    assert server.max_model_len(AZURE_CONVERSATION) % 1024 == 0
    # the models' own limits, from their config.json (max_position_embeddings)
    assert MODELS["llama-3-8b"].max_context == 8192
    assert MODELS["llama-3.1-8b"].max_context == 131_072
    assert MODELS["llama-2-7b"].max_context == 4096


@pytest.mark.parametrize(
    "batch, budget, chunked, context, refused",
    [
        (128, 2048, True, 8192, None),  # chunked: any budget of at least the batch
        (128, 2048, False, 8192, "is smaller than max_model_len (8192)"),
        (128, 8192, False, 8192, None),  # separate passes: a whole prompt fits a step
        (256, 128, True, 4096, "must be at least max_num_seqs (256)"),
        (256, 256, True, 4096, None),  # equal is accepted
    ],
)
def test_vllm_refuses_what_its_scheduler_config_refuses(batch, budget, chunked, context, refused):
    reason = server.vllm_refusal(batch, budget, chunked, context)
    if refused is None:
        assert reason is None
    else:
        assert refused in reason and reason.startswith("vLLM refuses to start")


def test_the_command_carries_every_setting_the_plan_assumed():
    line = server.vllm_command(
        "meta-llama/Meta-Llama-3-8B-Instruct",
        "llama-prod",
        gpus=2,
        batch=128,
        token_budget=8192,
        chunked=False,
        context=8192,
        memory_utilization=0.9,
    )
    argv = shlex.split(line)
    assert argv[:3] == ["vllm", "serve", "meta-llama/Meta-Llama-3-8B-Instruct"]
    flags = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert flags["--served-model-name"] == "llama-prod"
    assert flags["--tensor-parallel-size"] == "2"
    assert flags["--max-num-seqs"] == "128"
    assert flags["--max-num-batched-tokens"] == "8192"
    assert flags["--max-model-len"] == "8192"
    assert "--no-enable-chunked-prefill" in argv
    with pytest.raises(ValueError, match="vLLM refuses to start"):
        server.vllm_command(
            "m", "n", gpus=1, batch=128, token_budget=2048, chunked=False, context=8192,
            memory_utilization=0.9,
        )  # fmt: skip

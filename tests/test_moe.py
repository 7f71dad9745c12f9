"""A mixture of experts (Mixtral 8x7B) in the catalogue, the step model and the engine.

Checked against what is stated apart from the code: Mixtral's config.json (32 layers, hidden
4,096, 8 KV heads, 8 experts of three 4,096 × 14,336 matrices per layer, 2 per token, a
32,000-token vocabulary with untied input and output embeddings) and Mistral AI's figures,
46.7 B parameters in all and 12.9 B used per token ("Mixtral of experts", 11 December 2023).
"""

import math

import pytest

from replicaplan.serving.catalogue import GPUS, MODELS
from replicaplan.serving.replica import ReplicaModel, weights_read

MIXTRAL = MODELS["mixtral-8x7b"]


def test_the_parameters_add_up_to_mistrals_totals():
    """The experts from the config; the rest (embeddings, attention, routers) counted from the
    config apart: together they make the 46.7 B Mistral gives, and the active share its 12.9 B."""
    hidden, layers, vocab, kv_width, experts = 4096, 32, 32000, 8 * 128, 8
    shared = (
        2 * vocab * hidden  # input embedding and output head
        + layers * (2 * hidden * hidden + 2 * hidden * kv_width)  # q, o; k, v
        + layers * hidden * experts  # the routers
    )
    assert MIXTRAL.expert_params + shared == pytest.approx(46.7e9, rel=2e-3)
    assert MIXTRAL.params == 46.7e9
    assert MIXTRAL.active_params == pytest.approx(12.9e9, rel=5e-3)


def test_one_token_reads_the_active_weights_and_a_large_batch_nearly_all():
    """(1 − k/E)^T of the experts are left out by T tokens: at T = 1 the step reads exactly the
    active weights' bytes; at 64 tokens all but (3/4)^64 ≈ 1e-8 of the experts."""
    replica = ReplicaModel.from_hardware("mixtral-8x7b", "h100-sxm", gpus=2)
    assert replica.params == MIXTRAL.active_params
    assert float(replica.weight_read_bytes(1)) == pytest.approx(2 * MIXTRAL.active_params)
    two = float(replica.weight_read_bytes(2))
    expected_two = 2 * (MIXTRAL.params - MIXTRAL.expert_params * (1 - 1 + 0.75**2))
    assert two == pytest.approx(expected_two)
    assert float(replica.weight_read_bytes(64)) == pytest.approx(2 * 46.7e9, rel=1e-7)
    reads = [float(replica.weight_read_bytes(t)) for t in range(1, 40)]
    assert all(a < b for a, b in zip(reads, reads[1:], strict=False))
    # a dense model reads all its weights whatever the tokens
    dense = ReplicaModel.from_hardware("llama-3-8b", "h100-sxm")
    assert weights_read(dense.weight_bytes, 0.0, 0, 0, 17) == dense.weight_bytes


def test_its_decode_steps_cost_as_a_13b_model_alone_and_grow_towards_the_47b_read():
    """On 2 × H100 at its datasheet bandwidth: a step of one sequence reads 25.8 GB, one of 64
    reads 93.4 GB, so a single sequence decodes about 3.6 times faster per step than a full
    step of 64 (less the fixed and per-sequence costs, which do not scale with the weights)."""
    replica = ReplicaModel.from_hardware("mixtral-8x7b", "h100-sxm", gpus=2)
    weights_1 = float(replica.weight_read_bytes(1)) / replica.bandwidth
    weights_64 = float(replica.weight_read_bytes(64)) / replica.bandwidth
    assert weights_64 / weights_1 == pytest.approx(46.7 / MIXTRAL.active_params * 1e9, rel=1e-6)
    one, full = float(replica.step_s(1, 2000)), float(replica.step_s(64, 64 * 2000))
    assert one < full and one > weights_1


def test_it_fits_where_its_47b_weights_fit():
    """93.4 GB of bf16 weights: not on one 80 GB H100, on two, and on one 141 GB H200; in FP8
    (46.7 GB) on one H100. Eight KV heads split over 2 GPUs, not over 3 (vLLM shards them)."""
    with pytest.raises(ValueError, match="does not fit|weights"):
        ReplicaModel.from_hardware("mixtral-8x7b", "h100-sxm")
    assert ReplicaModel.from_hardware("mixtral-8x7b", "h100-sxm", gpus=2).kv_capacity_tokens > 0
    assert ReplicaModel.from_hardware("mixtral-8x7b", "h200-sxm").kv_capacity_tokens > 0
    assert ReplicaModel.from_hardware("mixtral-8x7b", "h100-sxm", dtype="fp8").weight_bytes == (
        46.7e9
    )
    with pytest.raises(ValueError, match="do not split over 3 GPUs"):
        ReplicaModel.from_hardware("mixtral-8x7b", "h100-sxm", gpus=3)
    assert GPUS["h200-sxm"].memory_bytes > MIXTRAL.weight_bytes > GPUS["h100-sxm"].memory_bytes


@pytest.mark.parametrize(
    "experts, k, expert_params",
    [(8, 0, 45e9), (8, 8, 45e9), (1, 1, 45e9), (8, 2, 0.0), (8, 2, 50e9), (8.0, 2, 45e9)],
)
def test_a_mixture_that_cannot_be_is_refused(experts, k, expert_params):
    from dataclasses import replace

    with pytest.raises(ValueError, match="a mixture of experts needs"):
        replace(MIXTRAL, experts=experts, experts_per_token=k, expert_params=expert_params)


def test_the_planner_plans_it_from_the_command_line(capsys):
    from pathlib import Path

    from replicaplan.interface.cli import main

    log = str(Path(__file__).parents[1] / "data/azure-llm-inference-2023/conv_sample.csv")
    args = ["plan", "--log", log, "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "2"]
    assert main([*args, "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["gpus_per_replica"] == 2 and math.isfinite(out["mu_star_rps"])
    assert main(["plan", "--log", log, "--model", "mixtral-8x7b", "--gpu", "h100-sxm"]) == 2
    err = capsys.readouterr().err
    assert "--gpus 1 --gpu h100-sxm: the weights of Mixtral-8x7B (93.4 GB)" in err
    assert "use more GPUs (--gpus)" in err and len(err.strip().splitlines()) == 1


def test_a_mixture_spelled_out_on_the_command_line():
    """--model takes a mixture as key=value pairs; one that cannot be is refused by its kind."""
    from replicaplan.serving.catalogue import from_text

    base = "params=46.7e9,layers=32,kv_heads=8,head_dim=128,hidden=4096"
    shape = from_text("model", f"{base},experts=8,experts_per_token=2,expert_params=45.1e9")
    assert shape.active_params == pytest.approx(46.7e9 - 0.75 * 45.1e9)
    for bad in ("experts=8,experts_per_token=9,expert_params=45.1e9", "experts=8"):
        with pytest.raises(ValueError, match="^model: a mixture of experts needs"):
            from_text("model", f"{base},{bad}")
    with pytest.raises(ValueError, match="^model: experts must be a whole number"):
        from_text("model", f"{base},experts=8.5,experts_per_token=2,expert_params=45.1e9")

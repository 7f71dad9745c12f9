"""The catalogue (serving.catalogue): its own specs parsed by name or spelled out."""

import pytest


def test_hardware_from_text_by_name_or_spelled_out():
    """The catalogue parses its own specs; errors name the kind and key, not a CLI option."""
    from replicaplan.serving.catalogue import GPUS, from_text

    assert from_text("gpu", "a100-80gb") is GPUS["a100-80gb"]
    spelled = from_text("gpu", "memory_bytes=80e9,bandwidth=2e12,flops=3e14,link_bandwidth=3e11")
    assert (spelled.memory_bytes, spelled.bandwidth, spelled.flops) == (80e9, 2e12, 3e14)
    for text, match in [
        ("a100", "^gpu: unknown name 'a100'"),
        ("memory_bytes=-1", "^gpu: memory_bytes must be a finite number > 0"),
        ("memory_bytes=80e9,bandwidth=x", "^gpu: bandwidth must be a finite number > 0"),
        ("memory_bytes=inf", "^gpu: memory_bytes must be a finite number > 0, got 'inf'"),
        ("speed=1", "^gpu: unknown key 'speed'"),
    ]:
        with pytest.raises(ValueError, match=match):
            from_text("gpu", text)
    # a count is a whole number: a fractional or overflowing layer count is refused, not cut
    base = "params=8e9,kv_heads=8,head_dim=128,hidden=4096"
    for layers, match in [
        ("32.5", "layers must be a whole number"),
        ("1e300", "layers must be a whole"),
    ]:
        with pytest.raises(ValueError, match=f"^model: {match}"):
            from_text("model", f"{base},layers={layers}")
    assert from_text("model", f"{base},layers=32.0").layers == 32


def test_the_cards_people_rent_behave_as_their_datasheets_and_vllm_say():
    """H100 PCIe, L4 and MI300X: what follows from their datasheets, checked against facts
    stated apart from them. vLLM's OpenAI server gives cards of 70 GiB or more (A100s aside)
    1,024 sequences and 8,192 tokens a step, smaller ones 256 and 2,048
    (EngineArgs.get_batch_defaults); a 70 B model's bf16 weights (141 GB) fit one 192 GB MI300X,
    as AMD showed at its launch, but not one 80 GB card; the L4 is the 24 GB card nvidia-smi
    shows as 23,034 MiB."""
    from replicaplan.serving.catalogue import GPUS, engine_defaults
    from replicaplan.serving.replica import ReplicaModel

    assert engine_defaults("h100-pcie") == engine_defaults("mi300x") == (1024, 8192)
    assert engine_defaults("l4") == (256, 2048)
    assert GPUS["l4"].memory_bytes / 2**20 == 23_034
    assert GPUS["mi300x"].memory_bytes > 192e9 > GPUS["mi300x"].memory_bytes * 0.9
    # dense is half the datasheet's "with sparsity" figure
    assert GPUS["h100-pcie"].flops == 1513e12 / 2 and GPUS["l4"].flops == 242e12 / 2
    assert ReplicaModel.from_hardware("llama-3-70b", "mi300x").kv_capacity_tokens > 0
    for card in ("h100-pcie", "l4"):
        with pytest.raises(ValueError, match="do not fit"):
            ReplicaModel.from_hardware("llama-3-70b", card)
    # the same 8 B model decodes faster on the card that reads memory faster
    rates = {
        card: ReplicaModel.from_hardware("llama-3-8b", card).max_rate_rps(300)
        for card in ("l4", "h100-pcie", "h100-sxm", "mi300x")
    }
    assert rates["l4"] < rates["h100-pcie"] < rates["h100-sxm"] < rates["mi300x"]


def test_a_b200_holds_a_70b_model_alone_and_decodes_fastest():
    """B200 (HGX): 180 GB holds Llama 3 70B's 141 GB of bf16 weights on one card, where an H100
    does not; vLLM gives it the large cards' defaults; its 7.7 TB/s against the H200's 4.8 and
    the MI300X's 5.3 make it the fastest decoder of an 8 B model; dense BF16 is half the
    specification's 4.5 PFLOPS with sparsity, FP8 twice BF16."""
    from replicaplan.serving.catalogue import GPUS, engine_defaults
    from replicaplan.serving.replica import ReplicaModel

    b200 = GPUS["b200"]
    assert (b200.flops, b200.fp8_flops) == (4.5e15 / 2, 2 * 4.5e15 / 2)
    assert engine_defaults("b200") == (1024, 8192)
    assert ReplicaModel.from_hardware("llama-3-70b", "b200").kv_capacity_tokens > 0
    rates = {
        card: ReplicaModel.from_hardware("llama-3-8b", card).max_rate_rps(300)
        for card in ("h200-sxm", "mi300x", "b200")
    }
    assert rates["h200-sxm"] < rates["mi300x"] < rates["b200"]
    assert b200.price_per_gpu_hour is None

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

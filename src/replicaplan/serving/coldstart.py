"""Cold start: how long a new replica takes from the call to its first served request.

    T_start = T_machine + T_image + T_weights + T_warmup,     T_weights = M_w / B_channel

with M_w the checkpoint bytes and B_channel the effective bandwidth of the slowest channel the
weights cross. With tensor parallelism over g GPUs each GPU loads M_w / g; if each GPU has a
channel of its own the weights term divides by g, if they all share one channel it does not.

The symbolic forms are built once with sympy (``weights_time_expression``) and the numeric
functions evaluate that very expression, so the formula is written in one place only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from replicaplan.core import _check, derived
from replicaplan.core.example import EXAMPLE, GB

if TYPE_CHECKING:
    import sympy as sp


def startup_expression() -> sp.Expr:
    """T_start as the sum of the four waits a new replica goes through, in order (unevaluated,
    so that it prints in that order; sympy would sort the terms by name)."""
    import sympy as sp

    from replicaplan.core.symbols import T_image, T_machine, T_warmup, T_weights

    return sp.Add(T_machine, T_image, T_weights, T_warmup, evaluate=False)


def weights_time_expression(shared_channel: bool = False) -> sp.Expr:
    """T_weights for g GPUs, each loading its shard M_w/g.

    Every shard crosses a channel of bandwidth B. With one channel per GPU the shards load in
    parallel and the time is that of one shard; through one shared channel they queue behind
    each other and the time is the sum.
    """
    import sympy as sp

    from replicaplan.core.symbols import B_channel, M_w, g

    shard_time = (M_w / g) / B_channel
    return sp.simplify(g * shard_time if shared_channel else shard_time)


def derivations() -> dict:
    """The numeric functions ``core.derived`` holds for this module (see ``tools/derive.py``)."""
    from replicaplan.core.symbols import B_channel, M_w, T_image, T_machine, T_warmup, T_weights, g

    weights = (M_w, B_channel, g)
    return {
        "weights_time": (
            weights,
            weights_time_expression(),
            "math",
            "weights_time_expression()",
        ),
        "weights_time_shared": (
            weights,
            weights_time_expression(shared_channel=True),
            "math",
            "weights_time_expression(shared_channel=True)",
        ),
        "startup_time": (
            (T_machine, T_image, T_weights, T_warmup),
            startup_expression(),
            "math",
            "startup_expression()",
        ),
    }


def weights_time(
    weight_bytes: float, bandwidth: float, gpus: int = 1, shared_channel: bool = False
) -> float:
    """Seconds to bring ``weight_bytes`` to the GPUs over channels of ``bandwidth`` bytes/s.

    >>> weights_time(140e9, 1e9)        # 70 B in bf16 from a 1 GB/s object store
    140.0
    >>> weights_time(140e9, 50e9, gpus=2)
    1.4
    """
    weight_bytes = _check.positive("weight_bytes", weight_bytes)
    bandwidth = _check.positive("bandwidth", bandwidth)
    gpus = _check.integer("gpus", gpus, minimum=1)
    weights = derived.weights_time_shared if shared_channel else derived.weights_time
    return float(weights(weight_bytes, bandwidth, gpus))


@dataclass(frozen=True)
class Tier:
    """A place the weights can be read from, with its effective bandwidth in bytes/s."""

    name: str
    bandwidth: float


TIERS = (
    Tier("network object store", 1 * GB),
    Tier("local NVMe disk", 7 * GB),
    Tier("host memory over PCIe", 50 * GB),
)
"""The source's three tiers: 1 GB/s object store, 7 GB/s NVMe, ~50 GB/s PCIe from host memory."""


def tier_times(
    weight_bytes: float = EXAMPLE.big_model_bytes,
    tiers=TIERS,
    gpus: int = 1,
    shared_channel: bool = True,
) -> list[tuple[str, float]]:
    """Weight-loading time from each tier; by default all through one channel, as in the source."""
    return [(t.name, weights_time(weight_bytes, t.bandwidth, gpus, shared_channel)) for t in tiers]


def startup_time(
    weights_s: float, machine_s: float = 0.0, image_s: float = 0.0, warmup_s: float = 0.0
) -> float:
    """T_start = T_machine + T_image + T_weights + T_warmup, seconds (each term ≥ 0)."""
    return float(
        derived.startup_time(
            _check.non_negative("machine_s", machine_s),
            _check.non_negative("image_s", image_s),
            _check.non_negative("weights_s", weights_s),
            _check.non_negative("warmup_s", warmup_s),
        )
    )

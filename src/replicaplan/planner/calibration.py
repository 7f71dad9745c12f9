"""The fluid replica the plan's replays run on, stretched to match the discrete replica at
the operating point, and the HPA and KEDA objects replayed second by second from their YAML.

Layer: planner.
"""

from __future__ import annotations

from dataclasses import replace

from replicaplan.autoscalers.manifest import (
    controller_from_manifest,
    controller_from_scaled_object,
)
from replicaplan.core import _check
from replicaplan.planner.operating import OperatingPoint
from replicaplan.serving.fluid import FluidReplica, replicas_needed
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.control import FleetRun, per_second, simulate_fleet


def fluid_replica(model: ReplicaModel, point: OperatingPoint) -> FluidReplica:
    """The replica in its fluid limit at the log's mean request, for second-by-second replays,
    calibrated to the discrete replica at the operating point.

    The fluid limit leaves out what the discrete replica measures at ρ*μ*: waits for a
    prefill pass and decode steps stalled by them. Its request time is stretched by
    κ = W̄ / W_s(L*) (at least 1) so that a replica holding L* in flight completes ρ*μ*
    requests a second, as Little's law and the measured W̄ say it does.
    """
    memory = model.weight_bytes + model.kv_capacity_tokens * model.kv_bytes_per_token
    plain = FluidReplica(
        model,
        prompt_tokens=point.mean_prompt,
        output_tokens=point.mean_output,
        gpu_memory_bytes=memory,
    )
    running = min(point.concurrency_target, model.batch)
    slowdown = max(1.0, point.residence_s / float(plain.residence_s(max(running, 1.0))))
    return replace(plain, slowdown=slowdown)


def hpa_replay(
    rate, manifest, replica: FluidReplica, *, startup_min: int, seed: int = 0
) -> FleetRun:
    """The HPA of ``manifest`` (dict or YAML) driving a fleet of ``replica`` over the per-minute
    ``rate``, second by second with Poisson arrivals (``control.simulate_fleet``)."""
    return _replay(rate, controller_from_manifest(manifest), replica, startup_min, seed)


def keda_replay(
    rate, scaled_object, replica: FluidReplica, *, startup_min: int, start_s: float, seed: int = 0
) -> FleetRun:
    """The HPA KEDA makes of ``scaled_object`` (its cron minimums included, placed on the clock
    by ``start_s``) driving a fleet of ``replica`` over ``rate``, as ``hpa_replay``."""
    controller = controller_from_scaled_object(scaled_object, start_s=start_s)
    return _replay(rate, controller, replica, startup_min, seed)


def _replay(rate, controller, replica: FluidReplica, startup_min: int, seed: int) -> FleetRun:
    rate = _check.rates("rate", rate)
    first = max(controller.hpa.min_replicas, replicas_needed(float(rate[0]), replica.capacity_rps))
    return simulate_fleet(
        per_second(rate),
        controller,
        startup_s=60 * _check.integer("startup_min", startup_min, minimum=0),
        replica=replica,
        initial=min(first, controller.hpa.max_replicas),
        seed=seed,
    )

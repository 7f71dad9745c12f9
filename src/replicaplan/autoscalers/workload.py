"""What the autoscaler scales, and what feeds its metric: the engine's Deployment and the
Prometheus Operator PodMonitor that scrapes it.

``engine_deployment`` writes an ``apps/v1`` Deployment of vLLM's OpenAI server: the container
runs the ``vllm serve`` line of the plan (``planner.server.vllm_command``, passed in as its
argument list), asks for as many ``nvidia.com/gpu`` as the tensor-parallel group, mounts a
memory-backed ``/dev/shm`` (the engine's workers share tensors through it), and answers
``/health`` on its port (vLLM's OpenAI server: 200 once the engine is up). Its probes are built
from the start-up time the plan assumed: the startup probe allows twice that before the pod is
restarted, so a slow weight load is not killed in a loop; the readiness probe takes the pod out
of the Service when it stops answering. On a scale-down Kubernetes sends SIGTERM after the
``preStop`` pause (the endpoints are removed first) and waits ``terminationGracePeriodSeconds``
for the requests in flight to finish.

``pod_monitor`` writes the ``monitoring.coreos.com/v1`` PodMonitor that makes the Prometheus
Operator scrape every pod of the Deployment on ``/metrics``: the series then carry the
``namespace`` and ``pod`` labels the queries and the adapter rule select on.

Field names follow the Kubernetes API (``DeploymentSpec``, ``Container``, ``Probe``,
``Lifecycle``; the 1.33 OpenAPI schema, checked in the tests) and the PodMonitor CRD of the
Prometheus Operator 0.93 (vendored in ``tests/data/prometheus-operator/``).

Layer: autoscalers.
"""

from __future__ import annotations

import math

from replicaplan.autoscalers import names
from replicaplan.core import _check

PORT = 8000
"""vLLM's OpenAI server's default port."""
PROBE_PERIOD_S = 10
"""Seconds between two startup (and liveness) probes."""
PRESTOP_S = 5
"""Seconds the pod keeps serving after it is marked for deletion, while the endpoints that
send it requests are removed."""
DRAIN_S = 120
"""Seconds Kubernetes waits after SIGTERM before it kills the container: the requests in
flight finish (an answer of a few hundred tokens takes seconds to tens of seconds)."""
SCRAPE_INTERVAL = "15s"
"""How often Prometheus scrapes each pod: four scrapes in the queries' one-minute window."""


def _labels(name: str) -> dict:
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "llm-server"}


def engine_deployment(
    name: str,
    namespace: str,
    *,
    image: str,
    serve_argv: list[str],
    gpus: int,
    replicas: int,
    startup_s: float,
) -> dict:
    """The engine's Deployment: ``serve_argv`` is the ``vllm serve …`` argument list (its
    first two words the command), ``gpus`` the tensor-parallel group, ``replicas`` the count it
    starts with (the HPA takes over), ``startup_s`` the start-up time the plan assumed."""
    names.check_name("name", name)
    names.check_namespace("namespace", namespace)
    if not isinstance(image, str) or not image.strip() or any(c.isspace() for c in image):
        raise ValueError(f"image must be a container image reference, got {image!r}")
    if list(serve_argv[:2]) != ["vllm", "serve"]:
        raise ValueError(f"serve_argv must start with 'vllm serve', got {serve_argv[:2]!r}")
    gpus = _check.integer("gpus", gpus, minimum=1)
    replicas = _check.integer("replicas", replicas, minimum=1)
    startup_s = _check.non_negative("startup_s", startup_s)
    # twice the plan's start-up before the pod is restarted (at least a minute)
    failures = max(6, math.ceil(2 * startup_s / PROBE_PERIOD_S))
    health = {"path": "/health", "port": "http"}
    container = {
        "name": "engine",
        "image": image,
        "command": list(serve_argv[:2]),
        "args": [*serve_argv[2:], "--port", str(PORT)],
        "ports": [{"name": "http", "containerPort": PORT, "protocol": "TCP"}],
        "resources": {
            "requests": {"nvidia.com/gpu": str(gpus)},
            "limits": {"nvidia.com/gpu": str(gpus)},
        },
        "startupProbe": {
            "httpGet": dict(health),
            "periodSeconds": PROBE_PERIOD_S,
            "failureThreshold": failures,
        },
        "readinessProbe": {"httpGet": dict(health), "periodSeconds": 5, "failureThreshold": 3},
        "livenessProbe": {
            "httpGet": dict(health),
            "periodSeconds": PROBE_PERIOD_S,
            "failureThreshold": 3,
        },
        "lifecycle": {"preStop": {"sleep": {"seconds": PRESTOP_S}}},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": _labels(name)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": _labels(name)},
            "template": {
                "metadata": {"labels": _labels(name)},
                "spec": {
                    "terminationGracePeriodSeconds": PRESTOP_S + DRAIN_S,
                    "containers": [container],
                    "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
                },
            },
        },
    }


def pod_monitor(name: str, namespace: str) -> dict:
    """The PodMonitor that scrapes the Deployment ``name``'s pods on /metrics of their port."""
    names.check_name("name", name)
    names.check_namespace("namespace", namespace)
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": name, "namespace": namespace, "labels": _labels(name)},
        "spec": {
            "selector": {"matchLabels": _labels(name)},
            "podMetricsEndpoints": [
                {"port": "http", "path": "/metrics", "interval": SCRAPE_INTERVAL}
            ],
        },
    }

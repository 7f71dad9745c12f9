"""The engine's Deployment and its PodMonitor (autoscalers/workload.py), checked against the
Kubernetes 1.33 OpenAPI schema and the Prometheus Operator's own PodMonitor CRD (vendored,
Apache-2.0: tests/data/prometheus-operator/README.md), each with broken copies that must fail;
and, through the planner, in agreement with the server line, the HPA and the KEDA query."""

import copy
import shlex
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from replicaplan.autoscalers import workload
from replicaplan.core.startup import Startup
from replicaplan.planner import server
from replicaplan.serving.catalogue import MODELS
from replicaplan.serving.replica import ReplicaModel

K8S = "1.33"
PODMONITOR_CRD = yaml.safe_load(
    (
        Path(__file__).parent
        / "data"
        / "prometheus-operator"
        / "monitoring.coreos.com_podmonitors.yaml"
    ).read_text()
)
(PODMONITOR_V1,) = [v for v in PODMONITOR_CRD["spec"]["versions"] if v["name"] == "v1"]
PODMONITOR_SCHEMA = PODMONITOR_V1["schema"]["openAPIV3Schema"]


@pytest.fixture(scope="module")
def objects(sample):
    model = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb", gpus=2, batch=128)
    return server.workload(
        model,
        MODELS["llama-3-8b"],
        sample,
        name="llm",
        namespace="serving",
        served_model="meta-llama/Meta-Llama-3-8B-Instruct",
        replicas=2,
        startup=Startup(8),
        image="vllm/vllm-openai:v0.11.0",
    )


def test_the_deployment_passes_the_kubernetes_schema_and_broken_copies_do_not(objects):
    _, (deployment, _) = objects
    assert kubernetes_validate.validate(deployment, K8S, strict=True)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    for breaking in (
        lambda c: c["startupProbe"].__setitem__("periodSeconds", "ten"),
        lambda c: c["resources"].__setitem__("limit", c["resources"].pop("limits")),
        lambda c: c["ports"][0].__setitem__("containerPort", "http"),
        lambda c: c["lifecycle"]["preStop"].__setitem__("sleep", {"secs": 5}),
    ):
        broken = copy.deepcopy(deployment)
        breaking(broken["spec"]["template"]["spec"]["containers"][0])
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, K8S, strict=True)
    assert container["name"] == "engine"


def test_the_pod_monitor_passes_its_crd_and_broken_copies_do_not(objects):
    _, (_, monitor) = objects
    jsonschema.validate(monitor, PODMONITOR_SCHEMA)
    for breaking in (
        lambda m: m["spec"]["podMetricsEndpoints"][0].__setitem__("interval", "fifteen"),
        lambda m: m["spec"].__setitem__("podMetricsEndpoints", {"port": "http"}),
        lambda m: m["spec"]["selector"].__setitem__("matchLabels", ["app"]),
    ):
        broken = copy.deepcopy(monitor)
        breaking(broken)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, PODMONITOR_SCHEMA)


def test_the_pieces_agree_with_each_other(objects):
    """The server line, the container's arguments, the GPUs it asks for, the labels the
    PodMonitor selects, the namespace, and the start-up the probes allow."""
    line, (deployment, monitor) = objects
    argv = shlex.split(line)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] + container["args"] == [*argv, "--port", "8000"]
    tp = argv[argv.index("--tensor-parallel-size") + 1]
    assert tp == "2"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == tp
    assert container["resources"]["requests"]["nvidia.com/gpu"] == tp
    template = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == template
    assert monitor["spec"]["selector"]["matchLabels"].items() <= template.items()
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == container["ports"][0]["name"]
    assert deployment["metadata"]["namespace"] == monitor["metadata"]["namespace"] == "serving"
    probe = container["startupProbe"]
    assert probe["periodSeconds"] * probe["failureThreshold"] >= 2 * 8 * 60
    assert argv[argv.index("--served-model-name") + 1] == "meta-llama/Meta-Llama-3-8B-Instruct"


def test_what_cannot_be_deployed_is_refused():
    with pytest.raises(ValueError, match="serve_argv must start with 'vllm serve'"):
        workload.engine_deployment(
            "llm", "serving", image="x", serve_argv=["python", "-m"], gpus=1, replicas=1,
            startup_s=60,
        )  # fmt: skip
    with pytest.raises(ValueError, match="namespace must be a DNS-1123 label"):
        workload.pod_monitor("llm", "Serving")
    with pytest.raises(ValueError, match="image must be a container image"):
        workload.engine_deployment(
            "llm", "serving", image="a b", serve_argv=["vllm", "serve"], gpus=1, replicas=1,
            startup_s=60,
        )  # fmt: skip


def _seconds(duration: str) -> float:
    """A Prometheus duration of one unit ('15s', '1m', '2h') in seconds."""
    return float(duration[:-1]) * {"s": 1, "m": 60, "h": 3600}[duration[-1]]


@pytest.mark.parametrize("signal", ["completion_rate", "concurrency", "kv_tokens", "ttft_guard"])
def test_each_query_range_spans_at_least_four_scrapes(objects, signal):
    """rate() and avg_over_time() over a range that holds fewer than two samples return
    nothing; Prometheus's documentation advises a range of at least four scrape intervals
    (querying/functions, rate()). Every range the queries carry, read back by a PromQL parser,
    against the interval the PodMonitor asks for."""
    import promql_parser

    from replicaplan.autoscalers import engines

    _, (_, monitor) = objects
    interval = _seconds(monitor["spec"]["podMetricsEndpoints"][0]["interval"])
    vllm = engines.ENGINES["vllm"]
    if signal == "ttft_guard":  # the latency guard's quantile of the TTFT histogram
        query = engines.ttft_quantile_query(vllm, 0.9, "serving", "m", "llm")
    else:
        query = engines.keda_query(vllm, signal, "serving", "m", 1e5, "llm")
    ranges, stack = [], [promql_parser.parse(query)]
    while stack:
        node = stack.pop()
        if isinstance(node, promql_parser.MatrixSelector):
            ranges.append(node.range.total_seconds())
        for attr in ("expr", "lhs", "rhs", "args"):
            child = getattr(node, attr, None)
            if isinstance(child, list):
                stack.extend(child)
            elif child is not None and not isinstance(child, str | int | float):
                stack.append(child)
    assert ranges and min(ranges) >= 4 * interval, (ranges, interval)

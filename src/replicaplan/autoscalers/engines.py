"""What serving engines export, and the queries that turn it into the signal a plan targets.

The plan holds ρ*μ* requests completed a second per replica by default (the rate of the
engine's counter of finished requests: it follows the demand while the fleet keeps up and the
fleet's throughput when it does not, and never counts a backlog, which is what made the signal
below run away while replicas start: ``planner.signals``). On request it holds L* requests in
flight per replica (running plus waiting, as Little's law counts them) or the tokens a replica
keeps in its KV cache. Each engine exports them under its own names, labelled with the served
model (``model_name``), from which a query reads the signal: the engines' own documentation
lists them
(vLLM's ``docs/design/metrics.md`` and ``vllm/v1/metrics/loggers.py``; SGLang's
``docs/references/production_metrics.md``). The cache's share in use (0 to 1) times the cache's
size in tokens, which the plan knows, gives the tokens held.

The same expression serves the KEDA trigger (summed over the fleet) and the prometheus-adapter
rule that exposes it to the HPA as a per-pod metric; each reads the last minute's mean, as the
planner's replays do.

Layer: autoscalers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Engine:
    """One engine's metric names."""

    name: str
    running: str
    """Requests in a batch (gauge)."""
    waiting: str
    """Requests queued for a batch slot (gauge)."""
    cache_usage: str
    """Share of the KV cache in use, 0 to 1 (gauge)."""
    completions: str
    """Requests finished (counter): vLLM's ``vllm:request_success_total``
    (``counter_request_success``, vllm/v1/metrics/loggers.py), SGLang's count of its end-to-end
    latency histogram, observed once a request finishes (``observe_one_finished_request``,
    python/sglang/srt/metrics/collector.py)."""
    ttft: str = ""
    """The time-to-first-token histogram (seconds; its ``_bucket`` series carry ``le``):
    vLLM's ``histogram_time_to_first_token`` (vllm/v1/metrics/loggers.py), SGLang's of the same
    name (python/sglang/srt/metrics/collector.py)."""
    model_label: str = "model_name"


ENGINES = {
    "vllm": Engine(
        "vLLM",
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:request_success_total",
        "vllm:time_to_first_token_seconds",
    ),
    "sglang": Engine(
        "SGLang",
        "sglang:num_running_reqs",
        "sglang:num_queue_reqs",
        "sglang:token_usage",
        "sglang:e2e_request_latency_seconds_count",
        "sglang:time_to_first_token_seconds",
    ),
}
"""The engines a plan can write for, by the name ``--engine`` takes."""

WINDOW = "1m"
"""The range each query averages over: the replays' one-minute metric."""

_LABEL_VALUE = re.compile(r"[^\"\\\n]*")


def engine(name: str) -> Engine:
    """The engine called ``name``; an unknown one is an error naming the known ones."""
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(sorted(ENGINES))}, got {name!r}")
    return ENGINES[name]


def pod_pattern(deployment: str) -> str:
    """The RE2 pattern of the names of a Deployment's pods, ``<deployment>-<hash>-<suffix>``: the
    ReplicaSet's pod-template hash and the pod's random suffix are single segments of lower-case
    letters and digits (Kubernetes' ``pkg/controller/deployment`` names the ReplicaSet
    ``<deployment>-<hash>``, and the ReplicaSet's pods take ``generateName`` from it). A
    Deployment ``llm`` does not match the pods of ``llm-big``: those have one segment more."""
    return deployment.replace(".", r"\\.") + "-[a-z0-9]+-[a-z0-9]+"


def selector(
    namespace: str, model: str, model_label: str = "model_name", deployment: str | None = None
) -> str:
    """The label matchers that keep one deployment's series: its namespace and served model
    (without them a query sums every engine the Prometheus scrapes), and with ``deployment``
    its pods' names (without it, every Deployment serving that model in the namespace: a
    canary, a second fleet). The ``pod`` label is the one a PodMonitor's targets carry."""
    for field, value in (("namespace", namespace), ("served model", model)):
        if not isinstance(value, str) or not value or not _LABEL_VALUE.fullmatch(value):
            raise ValueError(
                f"{field} must be a non-empty label value without quotes, backslashes or line "
                f"breaks, got {value!r}"
            )
    pods = "" if deployment is None else f',pod=~"{pod_pattern(deployment)}"'
    return f'{{namespace="{namespace}",{model_label}="{model}"{pods}}}'


SIGNALS = ("completion_rate", "concurrency", "kv_tokens")
"""The signals a plan can scale on (``--signal``), the measured choice first."""


def signal_expression(eng: Engine, signal: str, matchers: str, cache_tokens: float) -> str:
    """The per-pod PromQL of ``signal`` over the last minute: 'completion_rate' (requests
    finished a second, the rate of the engine's counter), 'concurrency' (running + waiting) or
    'kv_tokens' (cache share × the cache's tokens). ``matchers`` is a label selector ('{…}', or
    the adapter's template ``{<<.LabelMatchers>>}``)."""
    if signal == "completion_rate":
        # summed over the counter's own labels (vLLM's finished_reason), one series a pod
        return f"sum without (finished_reason) (rate({eng.completions}{matchers}[{WINDOW}]))"
    if signal == "concurrency":
        return (
            f"avg_over_time({eng.running}{matchers}[{WINDOW}]) + "
            f"avg_over_time({eng.waiting}{matchers}[{WINDOW}])"
        )
    if signal == "kv_tokens":
        if not cache_tokens > 0:
            raise ValueError(f"cache_tokens must be > 0, got {cache_tokens!r}")
        return f"avg_over_time({eng.cache_usage}{matchers}[{WINDOW}]) * {cache_tokens:.0f}"
    raise ValueError(f"signal must be one of {', '.join(SIGNALS)}, got {signal!r}")


def keda_query(
    eng: Engine,
    signal: str,
    namespace: str,
    model: str,
    cache_tokens: float,
    deployment: str | None = None,
) -> str:
    """The fleet's total of the signal, for KEDA's Prometheus trigger (AverageValue target):
    summed over the pods of ``deployment`` when given (the plan always gives it)."""
    matchers = selector(namespace, model, eng.model_label, deployment)
    return f"sum({signal_expression(eng, signal, matchers, cache_tokens)})"


def adapter_rule(eng: Engine, signal: str, metric_name: str, cache_tokens: float) -> dict:
    """A prometheus-adapter rule (its ``docs/config.md`` format: seriesQuery, resources,
    name, metricsQuery) exposing the signal per pod as the custom metric ``metric_name``, the
    Pods metric the HPA names. The series carry ``namespace`` and ``pod`` labels, as Prometheus's
    Kubernetes pod discovery attaches them."""
    series = {"completion_rate": eng.completions, "concurrency": eng.running}.get(
        signal, eng.cache_usage
    )
    expression = signal_expression(eng, signal, "{<<.LabelMatchers>>}", cache_tokens)
    return {
        "seriesQuery": f'{series}{{namespace!="",pod!=""}}',
        "resources": {
            "overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}
        },
        "name": {"matches": f"^{re.escape(series)}$", "as": metric_name},
        "metricsQuery": f"sum({expression}) by (<<.GroupBy>>)",
    }


def ttft_quantile_query(
    eng: Engine, quantile: float, namespace: str, model: str, deployment: str | None = None
) -> str:
    """The fleet's ``quantile`` of the time to first token over the last minute, from the
    engine's histogram: ``histogram_quantile`` of the buckets' rates summed over the pods of
    ``deployment`` (Prometheus interpolates within a bucket). With no request in the window
    the rates are 0 and the quantile is NaN."""
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must lie in (0, 1), got {quantile!r}")
    matchers = selector(namespace, model, eng.model_label, deployment)
    return (
        f"histogram_quantile({quantile!r}, sum by (le) "
        f"(rate({eng.ttft}_bucket{matchers}[{WINDOW}])))"
    )

"""The engines' metrics (autoscalers.engines): the names they export, the PromQL the KEDA object
and the prometheus-adapter rule carry (parsed by a real PromQL parser), and the adapter rule's
documented format."""

import jsonschema
import promql_parser
import pytest

from replicaplan.autoscalers import engines
from replicaplan.interface import cli

# as the engines document them (vLLM docs/design/metrics.md; SGLang
# docs/references/production_metrics.md), typed here, not read from the code under test
DOCUMENTED = {
    "vllm": ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"),
    "sglang": ("sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage"),
}

# prometheus-adapter's rule format (docs/config.md): a series query, how its labels map to
# Kubernetes resources, the name the metric is served as, and the query that computes it
ADAPTER_RULE = {
    "type": "object",
    "required": ["seriesQuery", "resources", "name", "metricsQuery"],
    "additionalProperties": False,
    "properties": {
        "seriesQuery": {"type": "string", "minLength": 1},
        "seriesFilters": {"type": "array"},
        "resources": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "template": {"type": "string"},
                "overrides": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["resource"],
                        "properties": {"group": {"type": "string"}, "resource": {"type": "string"}},
                        "additionalProperties": False,
                    },
                },
            },
        },
        "name": {
            "type": "object",
            "required": ["matches"],
            "additionalProperties": False,
            "properties": {"matches": {"type": "string"}, "as": {"type": "string"}},
        },
        "metricsQuery": {"type": "string", "pattern": r"<<\.LabelMatchers>>"},
    },
}


def _filled(template: str) -> str:
    """A metricsQuery as the adapter runs it: its templates filled in for two pods."""
    return template.replace("<<.LabelMatchers>>", 'namespace="llm",pod=~"a|b"').replace(
        "<<.GroupBy>>", "pod"
    )


@pytest.mark.parametrize("name", sorted(engines.ENGINES))
def test_each_engine_reads_its_documented_series(name):
    eng = engines.engine(name)
    assert (eng.running, eng.waiting, eng.cache_usage) == DOCUMENTED[name]
    # the finished-requests counter: vLLM's request_success_total, SGLang's histogram count
    assert (
        eng.completions
        == {
            "vllm": "vllm:request_success_total",
            "sglang": "sglang:e2e_request_latency_seconds_count",
        }[name]
    )
    assert eng.model_label == "model_name"


@pytest.mark.parametrize("name", sorted(engines.ENGINES))
@pytest.mark.parametrize("signal", engines.SIGNALS)
def test_every_query_written_parses_as_promql(name, signal):
    eng = engines.engine(name)
    query = engines.keda_query(eng, signal, "llm", "meta-llama/Llama-3.1-8B", 467_295)
    expr = promql_parser.parse(query)
    assert type(expr).__name__ == "AggregateExpr"  # one sum over the fleet
    text = str(expr.prettify())
    assert 'namespace="llm"' in text and 'model_name="meta-llama/Llama-3.1-8B"' in text
    rule = engines.adapter_rule(eng, signal, "x_metric", 467_295)
    jsonschema.validate(rule, ADAPTER_RULE)
    promql_parser.parse(_filled(rule["metricsQuery"]))
    promql_parser.parse(rule["seriesQuery"])
    if signal == "concurrency":  # running and waiting, both counted (L* counts both)
        assert eng.running in query and eng.waiting in query
    elif signal == "completion_rate":  # the rate of the engine's counter of finished requests
        assert f"rate({eng.completions}" in query and eng.waiting not in query
        assert rule["seriesQuery"].startswith(eng.completions)
    else:
        assert eng.cache_usage in query and "467295" in query


def test_broken_copies_fail_the_parser_and_the_format():
    rule = engines.adapter_rule(engines.engine("vllm"), "concurrency", "m", 1)
    with pytest.raises(ValueError):
        promql_parser.parse(_filled(rule["metricsQuery"])[:-1])  # an unclosed parenthesis
    for broken in (
        {k: v for k, v in rule.items() if k != "metricsQuery"},
        {**rule, "resources": {"overrides": {"pod": {"kind": "pod"}}}},
        {**rule, "name": {"as": "m"}},
        {**rule, "metricsQuery": "sum(vllm:num_requests_running)"},  # no label matchers
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, ADAPTER_RULE)


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="engine must be one of sglang, vllm"):
        engines.engine("tgi")
    with pytest.raises(ValueError, match="served model must be"):
        engines.selector("llm", 'a"b')
    with pytest.raises(ValueError, match="namespace must be"):
        engines.selector("", "m")
    with pytest.raises(ValueError, match="signal must be"):
        engines.signal_expression(engines.engine("vllm"), "gpu", "{}", 1)
    # the command offers every engine, and refuses another before any work
    assert cli.main(["plan", "--rates", "x.csv", "--engine", "tgi"]) == 2


def _pod_names(deployment: str, seed: int) -> list[str]:
    """Pod names as Kubernetes makes them for a Deployment: the ReplicaSet is
    ``<deployment>-<pod-template-hash>`` (the hash's safe encoding, up to 10 characters of
    'bcdfghjklmnpqrstvwxz2456789'), and each pod ``<replicaset>-<5 random characters>`` from the
    same alphabet (apimachinery's rand.String, through generateName)."""
    import random

    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    rng = random.Random(seed)
    out = []
    for _ in range(20):
        rs = "".join(rng.choice(alphabet) for _ in range(rng.randint(8, 10)))
        out.append(f"{deployment}-{rs}-{''.join(rng.choice(alphabet) for _ in range(5))}")
    return out


@pytest.mark.parametrize("deployment", ["llm", "llm.v2", "a-b-c"])
def test_the_keda_query_sums_its_deployments_pods_and_no_others(deployment):
    """The matcher the query carries, read back by a PromQL parser and run as RE2 runs it (fully
    anchored): it takes every pod of the Deployment, and none of a Deployment whose name
    extends it (``llm-big`` beside ``llm``) or of one whose name differs at a dot."""
    import re

    q = engines.keda_query(engines.ENGINES["vllm"], "concurrency", "prod", "m", 1.0, deployment)
    sides = promql_parser.parse(q).expr  # sum(running[1m] + waiting[1m])
    found = []
    for side in (sides.lhs, sides.rhs):
        matchers = side.args[0].vector_selector.matchers.matchers
        found.append({m.name: (str(m.op), m.value) for m in matchers})
    assert found[0] == found[1], q
    assert found[0]["namespace"] == ("MatchOp.Equal", "prod")
    assert found[0]["model_name"] == ("MatchOp.Equal", "m")
    op, value = found[0]["pod"]
    assert op == "MatchOp.Re"
    pattern = re.compile(value)
    assert all(pattern.fullmatch(p) for p in _pod_names(deployment, 0))
    for other in (f"{deployment}-big", deployment.replace(".", "x") + "x", "x" + deployment):
        assert not any(pattern.fullmatch(p) for p in _pod_names(other, 1)), other

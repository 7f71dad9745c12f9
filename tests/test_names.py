"""The names and addresses the Kubernetes API and Prometheus accept (autoscalers.names), on the
cases Kubernetes tests its own validation with: apimachinery's
``pkg/util/validation/validation_test.go`` (``TestIsDNS1123Label``, ``TestIsDNS1123Subdomain``),
and Prometheus's data model (a metric name matches ``[a-zA-Z_:][a-zA-Z0-9_:]*``,
https://prometheus.io/docs/concepts/data_model/)."""

import pytest

from replicaplan.autoscalers import names

LABEL_GOOD = ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a"]
LABEL_GOOD += ["1--a--b--2", "a" * 63]
LABEL_BAD = ["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1"]
LABEL_BAD += ["_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1"]
LABEL_BAD += ["1.2", " ", "a ", " a", "a b", "1 ", " 1", "1 2", "a" * 64]

SUBDOMAIN_GOOD = LABEL_GOOD + ["a.a", "a.1", "a-1.a--1--2--b", "0.a", "01.a", "1--a--b--2.0"]
SUBDOMAIN_GOOD += ["a" * 253, ("a" * 63 + ".") * 3 + "a" * 61]
SUBDOMAIN_BAD = [v for v in LABEL_BAD if "." not in v and v != "a" * 64]
SUBDOMAIN_BAD += ["a..b", "a-.b", "a.-b", "a.b-", "a.b.", ".a.b", "A.a", "a" * 254]


@pytest.mark.parametrize("value", LABEL_GOOD)
def test_a_namespace_is_any_dns_1123_label(value):
    assert names.check_namespace("namespace", value) == value


@pytest.mark.parametrize("value", LABEL_BAD + [None, 7])
def test_a_namespace_that_is_not_a_label_is_refused_by_its_field(value):
    with pytest.raises(ValueError, match=r"^--namespace must be a DNS-1123 label .* got "):
        names.check_namespace("--namespace", value)


@pytest.mark.parametrize("value", SUBDOMAIN_GOOD)
def test_an_objects_name_is_any_dns_1123_subdomain(value):
    assert names.check_name("name", value) == value


@pytest.mark.parametrize("value", SUBDOMAIN_BAD + [None])
def test_a_name_that_is_not_a_subdomain_is_refused_by_its_field(value):
    with pytest.raises(ValueError, match=r"^--name must be a DNS-1123 name .* got "):
        names.check_name("--name", value)


@pytest.mark.parametrize(
    "value", ["vllm:num_requests_running", "_x", ":x", "http_requests_total", "a1", "A_b:C"]
)
def test_prometheus_metric_names(value):
    assert names.check_metric("metric", value) == value


@pytest.mark.parametrize("value", ["", "1abc", "a-b", "a.b", "a b", "é", "a{b}"])
def test_a_metric_name_outside_the_data_model_is_refused(value):
    with pytest.raises(ValueError, match=r"^--metric-name must match \[a-zA-Z_:\]"):
        names.check_metric("--metric-name", value)


@pytest.mark.parametrize(
    "address",
    [
        "http://prometheus.monitoring.svc:9090",
        "https://prom.example.com",
        "http://10.0.0.7:9090/prometheus",
        "http://[::1]:9090",
    ],
)
def test_a_prometheus_address_with_a_scheme_and_a_host(address):
    assert names.check_prometheus("--prometheus", address) == address


@pytest.mark.parametrize(
    "address, match",
    [
        ("prometheus:9090", "must be an http"),  # no scheme: urllib reads 'prometheus' as one
        ("ftp://prometheus", "must be an http"),
        ("http://", "must be an http"),
        ("http://:9090", "must be an http"),
        ("http://prometheus:99999", "port that is not a number from 0 to 65535"),
        ("http://prometheus:port", "port that is not a number"),
        (None, "must be an http"),
    ],
)
def test_a_prometheus_address_keda_could_not_query_is_refused(address, match):
    with pytest.raises(ValueError, match=f"^--prometheus {match}|^--prometheus has a {match}"):
        names.check_prometheus("--prometheus", address)

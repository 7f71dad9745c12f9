"""The names and addresses the Kubernetes API, Prometheus and KEDA accept, checked once: an
object's name (a DNS-1123 subdomain), a namespace (a DNS-1123 label), a Prometheus metric name,
and the Prometheus address KEDA queries. Each check raises ``ValueError`` naming the field.

It imports nothing but the standard library, so the command line types its flags with it.

Layer: autoscalers.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
"""An RFC 1123 label, as the API server validates a namespace: at most 63 characters."""
DNS_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")
"""An RFC 1123 subdomain (at most 253 characters), as the API server validates an object's name."""
METRIC = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
"""A Prometheus metric name."""


def check_name(field: str, value) -> str:
    """An object's name: a DNS-1123 subdomain."""
    if not isinstance(value, str) or len(value) > 253 or not DNS_SUBDOMAIN.fullmatch(value):
        raise ValueError(
            f"{field} must be a DNS-1123 name (lower-case letters, digits, '-' and '.', "
            f"at most 253 characters, a letter or digit at each end), got {value!r}"
        )
    return value


def check_namespace(field: str, value) -> str:
    """A namespace's name: a DNS-1123 label."""
    if not isinstance(value, str) or not DNS_LABEL.fullmatch(value):
        raise ValueError(
            f"{field} must be a DNS-1123 label (lower-case letters, digits and '-', at most 63 "
            f"characters, a letter or digit at each end), got {value!r}"
        )
    return value


def check_metric(field: str, value) -> str:
    """A Prometheus metric name."""
    if not isinstance(value, str) or not METRIC.fullmatch(value):
        raise ValueError(
            f"{field} must match [a-zA-Z_:][a-zA-Z0-9_:]* (a Prometheus metric name), got {value!r}"
        )
    return value


def check_prometheus(field: str, address) -> str:
    """A Prometheus address KEDA's scaler can query: an http(s) URL with a host."""
    parts = urlsplit(address) if isinstance(address, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{field} must be an http(s) URL with a host, got {address!r}")
    try:
        parts.port  # noqa: B018 -- urllib checks the port only when it is read
    except ValueError:
        raise ValueError(f"{field} has a port that is not a number from 0 to 65535") from None
    return address

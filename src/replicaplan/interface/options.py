"""The command line's argument types: every number a flag takes is read and range-checked here,
once, as argparse parses it, and refused with the flag's own name and its allowed range
(``argument --startup: must be a whole number from 0 to 1,440, got '-1'``). What passes is in
the units the library takes, so the layers below never see a flag's text.

Layer: interface (imports only the catalogue and ``autoscalers.names``, which load no numpy:
``--help`` stays fast).
"""

from __future__ import annotations

import argparse
import math

from replicaplan.autoscalers import names

INT32_MAX = 2**31 - 1
"""The largest replica count the Kubernetes API takes (``maxReplicas`` is an int32)."""
MAX_GPUS = 64
"""The most GPUs a replica may span (--gpus): a tensor-parallel group is at most a few nodes."""
MAX_BATCH = 16_384
"""The largest batch cap --batch takes; the replica's state grows with it."""
MAX_TOKEN_BUDGET = 1_048_576
"""The largest --token-budget: a step of a million tokens is far past any GPU's."""
MAX_STARTUP_MIN = 24 * 60
"""The longest start-up time --startup takes, in minutes: a day."""
MAX_RESERVE = 10_000
"""The most spare replicas ``day --reserve`` keeps."""
MAX_REQUESTS = 1_000_000
"""The most requests a capacity sweep runs at each rate."""
MAX_SEED = 2**63 - 1
"""numpy's seeds are unsigned 64-bit; the book's are small."""


def _interval(low, high, low_open: bool, high_open: bool) -> str:
    def show(x):
        return "∞" if x == math.inf else f"{x:,g}" if isinstance(x, float) else f"{x:,}"

    return f"{'(' if low_open else '['}{show(low)}, {show(high)}{')' if high_open else ']'}"


def number(
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
):
    """A finite real number in the interval from ``low`` to ``high`` (open ends as said)."""
    where = _interval(low, high, low_open or low == -math.inf, high_open or high == math.inf)

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        inside = (
            math.isfinite(x)
            and (x > low if low_open else x >= low)
            and (x < high if high_open else x <= high)
        )
        if not inside:
            raise argparse.ArgumentTypeError(f"must be a number in {where}, got {text!r}")
        return x

    parse.__name__ = "number"  # argparse's own messages name the type
    return parse


def positive(text: str) -> float:
    """A finite number > 0."""
    return number(0.0, low_open=True)(text)


def share(text: str) -> float:
    """A number in (0, 1]: a utilization, a target."""
    return number(0.0, 1.0, low_open=True)(text)


def open_share(text: str) -> float:
    """A number in (0, 1): a quota, a precision."""
    return number(0.0, 1.0, low_open=True, high_open=True)(text)


def whole(low: int, high: int):
    """An integer from ``low`` to ``high``, written as one (``8``, not ``8.5`` or ``1e3``)."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = None
        if n is None or not low <= n <= high:
            raise argparse.ArgumentTypeError(
                f"must be a whole number from {low:,} to {high:,}, got {text!r}"
            )
        return n

    parse.__name__ = "whole number"
    return parse


def _named(check):
    """An argparse type from a ``names`` check: its message without the field's name, which
    argparse puts before it as the flag's."""

    def parse(text: str) -> str:
        try:
            return check("it", text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err).removeprefix("it ")) from None

    parse.__name__ = check.__name__.removeprefix("check_")
    return parse


object_name = _named(names.check_name)
"""A Kubernetes object's name (a DNS-1123 subdomain)."""
namespace = _named(names.check_namespace)
"""A namespace (a DNS-1123 label)."""
metric = _named(names.check_metric)
"""A Prometheus metric name."""
prometheus = _named(names.check_prometheus)
"""An http(s) URL with a host."""


def rate_grid(text: str) -> list[float]:
    """'a:b:step' (inclusive of b) or a comma-separated list of rates, each finite and > 0."""
    try:
        if ":" in text:
            start, stop, step = (float(x) for x in text.split(":"))
            if not (step > 0 and math.isfinite(stop - start) and stop >= start):
                raise ValueError
            n = int(round((stop - start) / step)) + 1
            if n > 10_000:
                raise ValueError
            values = [round(start + k * step, 10) for k in range(n)]
        else:
            values = [float(x) for x in text.split(",")]
        if not all(math.isfinite(v) and v > 0 for v in values):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            "must look like 1:10:0.5 or 2,4,6: rates > 0, a step > 0 and at most 10,000 of "
            f"them, got {text!r}"
        ) from None
    return values


def point(n: int, what: str):
    """``n`` comma-separated finite numbers > 0 (a measured point)."""

    def parse(text: str) -> tuple:
        try:
            values = tuple(float(v) for v in text.split(","))
        except ValueError:
            values = ()
        if len(values) != n or not all(math.isfinite(v) and v > 0 for v in values):
            raise argparse.ArgumentTypeError(
                f"must be {n} comma-separated numbers > 0 ({what}), got {text!r}"
            )
        return values

    parse.__name__ = "point"
    return parse


def gpu_price(text: str) -> tuple[str, float]:
    """GPU=PRICE: a catalogue GPU's name and the price of one of its GPU-hours (> 0)."""
    from replicaplan.serving.catalogue import GPUS

    gpu, sep, value = text.partition("=")
    if not sep or gpu not in GPUS:
        raise argparse.ArgumentTypeError(
            f"must be GPU=PRICE with a GPU of the catalogue ({', '.join(GPUS)}), got {text!r}"
        )
    return gpu, number(0.0, low_open=True)(value)


def label_value(text: str) -> str:
    """A Prometheus label value the queries quote (the engine's ``model_name``): any text but a
    quote, a backslash or a control character, which would end or escape the string."""
    if not text or any(c in text for c in '"\\') or any(ord(c) < 32 for c in text):
        raise argparse.ArgumentTypeError(
            f"must be a model name without quotes, backslashes or control characters, got {text!r}"
        )
    return text


DASK_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
"""The address schemes of a Dask scheduler's comms."""


def dask_address(text: str) -> str:
    """A Dask scheduler's address: SCHEME://HOST:PORT."""
    from urllib.parse import urlsplit

    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in DASK_SCHEMES or not parts.hostname or port is None:
        raise argparse.ArgumentTypeError(
            f"must be a scheduler's address, SCHEME://HOST:PORT with SCHEME one of "
            f"{', '.join(DASK_SCHEMES)}, got {text!r}"
        )
    return text


def image(text: str) -> str:
    """A container image reference: no spaces, not empty (the registry checks the rest)."""
    if not text or any(c.isspace() for c in text) or text.startswith("-"):
        raise argparse.ArgumentTypeError(f"must be a container image reference, got {text!r}")
    return text


def promql(text: str) -> str:
    """A PromQL expression, as Prometheus would parse it (promql-parser, the Rust port of
    Prometheus's own parser)."""
    import promql_parser

    try:
        promql_parser.parse(text)
    except (ValueError, TypeError) as err:
        raise argparse.ArgumentTypeError(f"not a PromQL expression ({err}): {text!r}") from None
    return text


def instant(text: str) -> float:
    """A moment written in ISO 8601 with its time zone (``2024-03-04T00:00Z``,
    ``2024-03-04T09:00+09:00``), as seconds since 1970-01-01T00:00Z; from 1970 to 2100."""
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise argparse.ArgumentTypeError(
            "must be an ISO 8601 time with its zone, such as 2024-03-04T00:00Z or "
            f"2024-03-04T09:00+09:00, got {text!r}"
        )
    seconds = moment.timestamp()
    if not 0 <= seconds <= 4_102_444_800:  # 2100-01-01T00:00Z
        raise argparse.ArgumentTypeError(f"must lie from 1970 to 2100, got {text!r}")
    return seconds


def time_zone(text: str) -> str:
    """An IANA time zone name (``Europe/Rome``, ``America/New_York``, ``Etc/UTC``)."""
    from replicaplan.core.calendar import zone

    try:
        zone(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an IANA time zone such as Europe/Rome or Etc/UTC, got {text!r}"
        ) from None
    return text

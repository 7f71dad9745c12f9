"""How far to trust the datasheet replica: its predictions against published measurements.

Each row of ``benchmarks/published/measurements.csv`` is one public measurement (its source,
engine, model, GPU, tensor parallelism, weight type, lengths, load and metric). ``predict``
builds the replica ``ReplicaModel.from_hardware`` makes of that model on that GPU, runs the
load the row describes through the engine, and reads the same metric off the trace:

* ``offline``: ``requests`` requests of fixed lengths all queued at once (``trtllm-bench
  throughput``), the output tokens over the time to the last answer (``output_tps``);
* ``batch``: one batch of ``requests`` requests arriving together, the time to the last answer
  (``latency_ms``, NeMo's static-batch latency);
* ``burst``: the requests of a saved ``vllm bench serve`` result (their own prompt and answer
  lengths, ``lambda_requests.json``) sent at once: output tokens over the run's length, or the
  mean TTFT.

``summary`` gives the geometric-mean error exp(mean |ln(predicted/published)|), the share of rows
within 1.25× and the same by regime (saturation, prefill-heavy, low-load).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replicaplan.serving.engine import simulate_open
from replicaplan.serving.replica import ReplicaModel


@dataclass(frozen=True)
class Measurement:
    """One published measurement (a row of the CSV)."""

    source: str
    engine: str
    engine_version: str
    model: str
    gpu: str
    tp: int
    dtype: str
    input_tokens: str
    output_tokens: str
    load: str
    requests: int
    metric: str
    published: float
    regime: str


def read_measurements(path: str | Path) -> list[Measurement]:
    """The rows of a measurements CSV, in order."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for k, row in enumerate(rows, start=2):
        try:
            out.append(
                Measurement(
                    **{
                        **row,
                        "tp": int(row["tp"]),
                        "requests": int(row["requests"]),
                        "published": float(row["published"]),
                    }
                )
            )
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{path}, row {k}: {err}") from None
    return out


def replica_for(m: Measurement, **overrides) -> ReplicaModel:
    """The datasheet replica of the row's model on its GPUs (vLLM V1's defaults)."""
    return ReplicaModel.from_hardware(m.model, m.gpu, gpus=m.tp, dtype=m.dtype, **overrides)


def _lengths(m: Measurement, requests_file: Path | None):
    if m.load == "burst":
        key = m.source.split(":", 1)[1]
        runs = json.loads(Path(requests_file).read_text(encoding="utf-8"))
        prompt = np.asarray(runs[key]["input_lens"])
        output = np.maximum(np.asarray(runs[key]["output_lens"]), 1)  # failed answers: one token
        return prompt, output
    n = m.requests
    return np.full(n, int(m.input_tokens)), np.full(n, int(m.output_tokens))


def predict(m: Measurement, requests_file: Path | None = None, **overrides) -> float:
    """The row's metric as the datasheet replica serves the row's load."""
    model = replica_for(m, **overrides)
    prompt, output = _lengths(m, requests_file)
    trace = simulate_open(model, np.zeros(prompt.size), prompt, output)
    span = float(trace.end.max())
    if m.metric == "output_tps":
        return float(output.sum()) / span
    if m.metric == "latency_ms":
        return span * 1e3
    if m.metric == "mean_ttft_ms":
        return float(trace.ttft.mean()) * 1e3
    raise ValueError(f"unknown metric {m.metric!r}")


@dataclass(frozen=True)
class Summary:
    """The error of a set of predictions."""

    rows: int
    gm_error: float
    """exp(mean |ln(predicted/published)|): 1.15 means 15 % off on the geometric average."""
    within_125: float
    """Share of rows with predicted/published between 1/1.25 and 1.25."""
    bias: float
    """exp(mean ln(predicted/published)): the average ratio, its sign of error."""


def summarize(ratios) -> Summary:
    """``Summary`` of predicted/published ratios."""
    logs = np.log(np.asarray(ratios, dtype=float))
    return Summary(
        int(logs.size),
        float(math.exp(np.abs(logs).mean())),
        float((np.abs(logs) <= math.log(1.25)).mean()),
        float(math.exp(logs.mean())),
    )


def compare(path: str | Path, **overrides) -> list[tuple[Measurement, float, float]]:
    """(row, predicted, predicted/published) for every row of the CSV at ``path``; the saved
    requests of ``burst`` rows are read from ``lambda_requests.json`` beside it."""
    path = Path(path)
    requests_file = path.parent / "lambda_requests.json"
    out = []
    for m in read_measurements(path):
        p = predict(m, requests_file, **overrides)
        out.append((m, p, p / m.published))
    return out


def by_regime(results) -> dict[str, Summary]:
    """``summarize`` of the ratios of each regime, and of all rows under "all"."""
    groups: dict[str, list[float]] = {}
    for m, _, ratio in results:
        groups.setdefault(m.regime, []).append(ratio)
    out = {name: summarize(r) for name, r in sorted(groups.items())}
    out["all"] = summarize([r for _, _, r in results])
    return out


DATASHEET_ERROR = {"rows": 78, "gm_error": 1.117, "within_125": 0.96}
"""What ``compare`` finds on benchmarks/published (tests/test_published.py holds these to the
set's own figures): the margin a plan on a datasheet replica states."""


def trust_sentence(source: str) -> str:
    """How far the replica named by ``source`` (``ReplicaModel.source``) is to be trusted."""
    if source.startswith("datasheet"):
        e = DATASHEET_ERROR
        return (
            f"a datasheet replica lands within x{e['gm_error']:.2f} of {e['rows']} published "
            f"measurements on the geometric average ({e['within_125']:.0%} within 1.25x, "
            "benchmarks/published); fit it to your own server (replicaplan fit --bench) to "
            "close the rest"
        )
    if source.startswith("fitted"):
        return "fitted to your own server's measurements: as right as they are"
    return "the book's running example, not a real server: give --model and --gpu, or --replica"

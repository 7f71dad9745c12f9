"""A replica fitted to an operator's own benchmark: read the run, fit the step, save the replica.

Two result formats are read:

* ``vllm bench serve --save-result --save-detailed`` (and the older
  ``benchmarks/benchmark_serving.py``; vllm/benchmarks/serve.py writes them): one JSON object
  with ``input_lens``, ``output_lens``, ``ttfts`` (seconds) and ``itls`` (the gaps between the
  chunks of a request's stream, seconds), one entry per request, ``errors``, the load it ran
  (``request_rate``, ``max_concurrency``) and ``model_id``;
* GuideLLM's report (``guidellm benchmark … --output-path benchmarks.json``): ``benchmarks``,
  each with ``requests.successful``, each request with ``prompt_tokens``, ``output_tokens``,
  ``time_to_first_token_ms`` and ``inter_token_latency_ms`` (or the ``scheduler_info`` timings
  they are computed from).

``fit`` replays the benchmark's own requests through a replica of the model on the GPUs (its
load: all at once, a fixed number in flight, or Poisson arrivals at its rate) and adjusts the
step's four timing parameters (t_0, t_seq, B_ach, F_ach) by damped Gauss-Newton least squares
on the logarithms of the TTFT and TPOT deciles 1, 2.5, 5, 7.5 and 9 (of ten), with each
parameter's standard error from the Jacobian at the optimum. ``save`` writes the fitted replica
as JSON, which ``replicaplan plan --replica FILE`` reads back (``load``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replicaplan.serving.catalogue import MODELS, ModelShape
from replicaplan.serving.engine import simulate_closed, simulate_open
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic.loadgen import poisson_arrivals

QUANTILES = (10, 25, 50, 75, 90)
"""Percentiles of TTFT and TPOT the fit matches."""
FORMAT = "replicaplan-replica/1"
"""The ``format`` of a saved replica file."""


@dataclass(frozen=True)
class Bench:
    """One benchmark run: its requests' lengths and times, and the load it ran at."""

    prompt: np.ndarray
    output: np.ndarray
    ttft: np.ndarray
    """Seconds to each request's first token."""
    tpot: np.ndarray
    """Mean seconds between each request's tokens after the first (nan for one-token answers)."""
    rate: float
    """Requests per second sent (inf: all at once, or as fast as ``concurrency`` allows)."""
    concurrency: int | None
    """Requests kept in flight (None: no cap)."""
    model_id: str | None
    source: str
    arrival: np.ndarray | None = None
    """When each request was sent, seconds from the first (GuideLLM records it); None: the
    load is rebuilt from ``rate`` and ``concurrency``."""


def _fail(path, what: str) -> ValueError:
    return ValueError(f"{path}: {what}")


def _read_json(path: Path, what: str):
    """A file's JSON, or an error naming the file: missing, or not JSON (truncated?)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _fail(path, "no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise _fail(path, f"not {what} (truncated?): {err}") from None


def read_bench(path: str | Path) -> Bench:
    """A benchmark result file, vLLM's or GuideLLM's (told apart by their keys). Errors name
    the file and what is wrong: not JSON (a truncated file), neither format, lengths and times
    of different counts, a negative or non-finite time, fewer than 10 requests."""
    path = Path(path)
    data = _read_json(path, "a JSON benchmark result")
    if not isinstance(data, dict):
        raise _fail(path, "a benchmark result is a JSON object")
    if "input_lens" in data:
        bench = _vllm(path, data)
    elif "benchmarks" in data:
        bench = _guidellm(path, data)
    else:
        raise _fail(
            path,
            "neither a vLLM result (input_lens, output_lens, ttfts, itls: `vllm bench serve "
            "--save-result --save-detailed`) nor a GuideLLM report (benchmarks)",
        )
    if bench.prompt.size < 10:
        raise _fail(path, f"{bench.prompt.size} requests; a fit needs 10 or more")
    for name in ("prompt", "output", "ttft"):
        values = getattr(bench, name)
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise _fail(path, f"{name} must hold finite values >= 0")
    return bench


def _vllm(path, data) -> Bench:
    try:
        prompt = np.asarray(data["input_lens"], dtype=float)
        output = np.asarray(data["output_lens"], dtype=float)
        ttft = np.asarray(data["ttfts"], dtype=float)
        itls = data["itls"]
    except (KeyError, TypeError, ValueError) as err:
        raise _fail(
            path, f"a vLLM result needs input_lens, output_lens, ttfts, itls: {err}"
        ) from None
    if not (prompt.size == output.size == ttft.size == len(itls)):
        raise _fail(path, "input_lens, output_lens, ttfts and itls must have one entry a request")
    errors = data.get("errors") or [""] * prompt.size
    ok = np.array([not e for e in errors]) & (output >= 1) & (ttft > 0)
    # vLLM's TPOT: the time after the first token over the tokens after it (a server that
    # streams tokens in chunks sends fewer gaps than tokens, so the mean gap is not it)
    tpot = np.array(
        [
            float(np.sum(g)) / (o - 1) if o > 1 and len(g) else math.nan
            for g, o in zip(itls, output, strict=True)
        ]
    )
    rate = data.get("request_rate", "inf")
    rate = math.inf if rate in ("inf", None) else float(rate)
    return Bench(
        prompt[ok],
        output[ok],
        ttft[ok],
        tpot[ok],
        rate,
        data.get("max_concurrency"),
        data.get("model_id"),
        str(path),
    )


def _guidellm(path, data) -> Bench:
    rows = []
    for bench in data.get("benchmarks") or []:
        requests = (bench.get("requests") or {}).get("successful") or []
        for r in requests:
            timings = (r.get("scheduler_info") or {}).get("request_timings") or {}
            ttft_ms = r.get("time_to_first_token_ms")
            itl_ms = r.get("inter_token_latency_ms")
            if ttft_ms is None and timings.get("first_iteration") and timings.get("request_start"):
                ttft_ms = 1000 * (timings["first_iteration"] - timings["request_start"])
            if (
                itl_ms is None
                and timings.get("last_iteration")
                and timings.get("first_iteration")
                and (r.get("output_tokens") or 0) > 1
            ):
                span = timings["last_iteration"] - timings["first_iteration"]
                itl_ms = 1000 * span / (r["output_tokens"] - 1)
            if r.get("prompt_tokens") is None or r.get("output_tokens") is None or ttft_ms is None:
                continue
            rows.append(
                (
                    r["prompt_tokens"],
                    r["output_tokens"],
                    ttft_ms / 1000,
                    math.nan if itl_ms is None else itl_ms / 1000,
                    timings.get("request_start", math.nan),
                )
            )
    if not rows:
        raise _fail(path, "a GuideLLM report with no successful request carrying its tokens")
    arr = np.array(rows, dtype=float)
    model = None
    for bench in data.get("benchmarks") or []:
        model = ((bench.get("worker") or {}).get("backend_model")) or model
    arr = arr[np.argsort(arr[:, 4], kind="stable")] if np.all(np.isfinite(arr[:, 4])) else arr
    sent = arr[:, 4] - arr[0, 4] if np.all(np.isfinite(arr[:, 4])) else None
    return Bench(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], math.inf, None, model, str(path), sent)


def _normal_name(name: str) -> str:
    """'meta-llama/Meta-Llama-3-8B-Instruct' and 'llama-3-8b' alike: lower case, the org and the
    variant words (instruct, chat, hf, meta) left out."""
    name = name.lower().rsplit("/", 1)[-1]
    words = [w for w in re.split(r"[-_ ]+", name) if w not in {"meta", "instruct", "chat", "hf"}]
    return "-".join(words)


def check_model(bench: Bench, shape: ModelShape, option: str = "--model") -> None:
    """Refuse a benchmark of another model than ``shape`` (when the file names its model)."""
    if not bench.model_id:
        return
    ran, asked = _normal_name(bench.model_id), _normal_name(shape.name)
    if ran != asked:
        raise ValueError(
            f"{bench.source}: the benchmark ran {bench.model_id!r}, not {option} {shape.name!r}; "
            "fit a benchmark of the model you plan for"
        )


def replay(model: ReplicaModel, bench: Bench, seed: int = 0):
    """The benchmark's requests through ``model`` under the benchmark's load: the trace."""
    prompt = bench.prompt.astype(np.int64)
    output = np.maximum(bench.output.astype(np.int64), 1)
    n = prompt.size
    if bench.arrival is not None:
        return simulate_open(model, bench.arrival, prompt, output)
    if bench.concurrency:
        users = int(min(bench.concurrency, n))
        return simulate_closed(model, users, np.zeros(n), prompt, output)
    if math.isinf(bench.rate):
        return simulate_open(model, np.zeros(n), prompt, output)
    arrival = poisson_arrivals(bench.rate, n, np.random.default_rng(seed))
    return simulate_open(model, arrival, prompt, output)


def _summary(ttft, tpot) -> np.ndarray:
    tpot = tpot[np.isfinite(tpot) & (tpot > 0)]
    return np.concatenate([np.percentile(ttft, QUANTILES), np.percentile(tpot, QUANTILES)])


_PARAMS = ("step_floor_s", "seq_step_s", "bandwidth", "prefill_flops")


def _with(model: ReplicaModel, theta) -> ReplicaModel:
    values = dict(zip(_PARAMS, np.exp(theta), strict=True))
    values["prefill_floor_s"] = values["step_floor_s"]
    return dataclasses.replace(model, **values)


@dataclass(frozen=True)
class Fit:
    """A fitted replica and how well it fits."""

    model: ReplicaModel
    measured: dict
    """TTFT and TPOT percentiles of the benchmark, seconds (``ttft_p50``, ``tpot_p90``, …)."""
    fitted: dict
    """The same of the fitted replica's replay."""
    residual: float
    """Root mean square of log(fitted/measured) over those percentiles."""
    params: dict
    """Each fitted parameter: (value, standard error)."""


def fit(bench: Bench, start: ReplicaModel, *, iterations: int = 40) -> Fit:
    """Fit ``start``'s t_0, t_seq, B_ach and F_ach to ``bench`` (see the module)."""
    target = np.log(_summary(bench.ttft, bench.tpot))
    floors = np.array([1e-5, 1e-7, 1.0, 1.0])

    def values(model):
        trace = replay(model, bench)
        return np.log(np.maximum(_summary(trace.ttft, trace.tpot), 1e-9))

    def residual(theta):
        return values(_with(start, theta)) - target

    theta = np.log(np.maximum([getattr(start, p) for p in _PARAMS], floors))
    r = residual(theta)
    damping = 1e-2
    for _ in range(iterations):
        jac = np.empty((r.size, theta.size))
        for k in range(theta.size):
            step = np.zeros(theta.size)
            step[k] = 0.02  # a few per cent: the replay's percentiles move in small jumps
            jac[:, k] = (residual(theta + step) - residual(theta - step)) / 0.04
        normal = jac.T @ jac
        gradient = jac.T @ r
        improved = False
        for _ in range(8):
            delta = -np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-12), gradient)
            trial = theta + np.clip(delta, -1.0, 1.0)
            r_trial = residual(trial)
            if r_trial @ r_trial < r @ r:
                theta, r, damping, improved = trial, r_trial, damping / 3, True
                break
            damping *= 4
        if not improved or np.abs(delta).max() < 1e-4:
            break
    dof = max(r.size - theta.size, 1)
    s2 = float(r @ r) / dof
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    se_log = np.sqrt(np.clip(np.diag(cov), 0, None))
    fitted_model = _with(start, theta)
    fitted_model = dataclasses.replace(fitted_model, source=f"fitted to {Path(bench.source).name}")
    names = [f"{k}_p{q}" for k in ("ttft", "tpot") for q in QUANTILES]
    return Fit(
        fitted_model,
        dict(zip(names, np.exp(target).tolist(), strict=True)),
        dict(zip(names, np.exp(target + r).tolist(), strict=True)),
        float(np.sqrt(np.mean(r**2))),
        {
            p: (float(v), float(v * e))
            for p, v, e in zip(_PARAMS, np.exp(theta), se_log, strict=True)
        },
    )


def calibration(fitted: ReplicaModel, gpu, gpus: int, dtype: str = "bf16") -> dict:
    """The fit as ``from_hardware``'s engine constants, to build other configurations with: the
    floor and the time per sequence as fitted, the bandwidth and FLOP/s as shares of the peaks
    of the ``gpus`` × ``gpu`` the benchmark ran on (for a dtype's peak, its FP8 one where the
    card has it)."""
    return {
        "step_floor_s": fitted.step_floor_s,
        "seq_step_s": fitted.seq_step_s,
        "bandwidth_efficiency": min(fitted.bandwidth / (gpus * gpu.bandwidth), 1.0),
        "prefill_efficiency": min(fitted.prefill_flops / (gpus * gpu.flops_for(dtype)), 1.0),
    }


def read_calibration(path: str | Path) -> dict:
    """The engine constants a replica file carries (``calibration``); an error names the file
    when it has none."""
    path = Path(path)
    data = _read_json(path, "a replica file")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _fail(path, f"not a replica file: its format must be {FORMAT!r}")
    found = data.get("calibration")
    if not isinstance(found, dict) or set(found) != set(_CALIBRATED):
        raise _fail(path, "carries no calibration (write it again with replicaplan fit)")
    for name, value in found.items():
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise _fail(path, f"calibration {name} must be a finite number >= 0, got {value!r}")
    return found


_CALIBRATED = ("step_floor_s", "seq_step_s", "bandwidth_efficiency", "prefill_efficiency")


def save(fitted: Fit, path: str | Path, calibrated: dict | None = None) -> str:
    """The replica file's text: the model's fields, the fit's residual and parameters, and the
    engine constants ``calibrated`` (``calibration``) that ``search --replica`` builds with."""
    fields = {
        f.name: getattr(fitted.model, f.name)
        for f in dataclasses.fields(ReplicaModel)
        if f.name != "source"
    }
    return json.dumps(
        {
            "format": FORMAT,
            "source": fitted.model.source,
            "replica": fields,
            "calibration": calibrated,
            "fit": {
                "residual_log_rms": fitted.residual,
                "params": {k: {"value": v, "stderr": e} for k, (v, e) in fitted.params.items()},
                "measured": fitted.measured,
                "fitted": fitted.fitted,
            },
        },
        indent=2,
    )


def load(path: str | Path) -> ReplicaModel:
    """A replica saved by ``save``; errors name the file and what is wrong."""
    path = Path(path)
    data = _read_json(path, "a replica file")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _fail(path, f"not a replica file: its format must be {FORMAT!r}")
    fields = data.get("replica") or {}
    known = {f.name for f in dataclasses.fields(ReplicaModel)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise _fail(path, f"unknown replica fields: {', '.join(unknown)}")
    try:
        return ReplicaModel(**fields, source=str(data.get("source") or f"read from {path.name}"))
    except (TypeError, ValueError) as err:
        raise _fail(path, str(err)) from None


def shape_of(name: str) -> ModelShape:
    """A catalogue model by name (the fit needs its parameters and cache size)."""
    if name not in MODELS:
        raise ValueError(f"--model: unknown name {name!r}; known: {', '.join(sorted(MODELS))}")
    return MODELS[name]

"""Which replica to rent: a grid of configurations searched for one log.

A candidate is a GPU from the catalogue, the GPUs per replica (tensor parallelism), the batch
cap (vLLM's ``max_num_seqs``), the prefill token budget (``max_num_batched_tokens``) and
chunked prefill on or off. ``evaluate`` screens one: does the model fit, μ* with its standard
error on the log's mix, the TTFT and TPOT p90 at the operating rate, and the fleet the planner's
replay recommends for the log's traffic with its replica-hours, minutes short and prices per
million input and output tokens. ``search`` screens them all, in parallel (a process pool, or a
Dask cluster), picks the cheapest that keeps the promises within the shortfall budget and plans
it in full (``plan.plan``, the manifests included), and marks the Pareto front of price against
the two latencies.

Every candidate is seeded the same way and evaluated alone, so the results do not depend on
where or in which order they run: serial, pool and cluster give the same numbers bit for bit
(tested).

Layer: planner.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from replicaplan.core import _check, parallel
from replicaplan.core.promises import PROMISES, Promises
from replicaplan.core.sizing import SIZING, Sizing
from replicaplan.core.startup import STARTUP, Startup
from replicaplan.economics.cost import Pricing
from replicaplan.planner.grid import (
    SEARCH_BATCHES,
    SEARCH_CHUNKED,
    SEARCH_GPUS,
    SEARCH_GPUS_PER_REPLICA,
    SEARCH_REQUESTS,
    SEARCH_TOKEN_BUDGETS,
)
from replicaplan.planner.operating import bill_by_phase, operating_point, phase_seconds_at
from replicaplan.planner.replay import recommend, replay
from replicaplan.planner.server import max_model_len, vllm_refusal
from replicaplan.serving.catalogue import GPUS, MODELS, ModelShape, replica_hour_price
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic.loadgen import AZURE_CONVERSATION, LengthMix
from replicaplan.traffic.logs import TraceFile

SEARCH_GRID_POINTS = 7
"""Rates of each screening sweep's first grid (0.1 to 1.3 of the raw rate; the planner's 13)."""
SEARCH_RESOLUTION = 0.005
"""The screening's bisection stops at this share of the raw rate (the planner's: 0.02 req/s,
which on a fast replica costs several more runs for digits below its standard error)."""


@dataclass(frozen=True, order=True)
class Candidate:
    """One configuration of a replica."""

    gpu: str
    gpus: int
    batch: int
    token_budget: int
    chunked: bool

    @property
    def label(self) -> str:
        mode = "chunked" if self.chunked else "separate prefill"
        return f"{self.gpu} x{self.gpus}, batch {self.batch}, budget {self.token_budget}, {mode}"

    def replica(self, model: ModelShape | str, calibration: tuple = ()) -> ReplicaModel:
        """The replica this candidate runs (``ReplicaModel.from_hardware``), with the engine
        constants of ``calibration`` ((name, value) pairs of ``from_hardware``'s keywords, a
        fit to one's own benchmark: ``benchfit.calibration``) in place of the datasheet's."""
        built = ReplicaModel.from_hardware(
            model,
            self.gpu,
            gpus=self.gpus,
            batch=self.batch,
            token_budget=self.token_budget,
            **dict(calibration),
        )
        return replace(built, chunked_prefill=self.chunked)


def grid(
    gpus=SEARCH_GPUS,
    gpus_per_replica=SEARCH_GPUS_PER_REPLICA,
    batches=SEARCH_BATCHES,
    token_budgets=SEARCH_TOKEN_BUDGETS,
    chunked=SEARCH_CHUNKED,
) -> list[Candidate]:
    """Every combination, in a fixed order."""
    for name in gpus:
        if name not in GPUS:
            raise ValueError(f"gpus: unknown GPU {name!r}; known: {', '.join(sorted(GPUS))}")
    for label, values in (
        ("gpus_per_replica", gpus_per_replica),
        ("batches", batches),
        ("token_budgets", token_budgets),
    ):
        if not values:
            raise ValueError(f"{label} must name at least one value")
        for v in values:
            _check.integer(label, v, minimum=1)
    if not gpus or not chunked:
        raise ValueError("gpus and chunked must name at least one value")
    return [
        Candidate(g, int(n), int(b), int(t), bool(c))
        for g, n, b, t, c in itertools.product(
            gpus, gpus_per_replica, batches, token_budgets, chunked
        )
    ]


@dataclass(frozen=True)
class Settings:
    """What every candidate is judged by: the promises, the sizing (ρ* and the short budget;
    ``core.sizing``), the start-up, the prices (per GPU-hour, by GPU name; the catalogue's list
    prices by default) and the screening's size and seed."""

    promises: Promises = PROMISES
    sizing: Sizing = SIZING
    startup: Startup = STARTUP
    prices: tuple = ()
    """(GPU name, price of one GPU-hour) pairs overriding the catalogue's."""
    n_requests: int = SEARCH_REQUESTS
    seed: int = 0
    calibration: tuple = ()
    """(name, value) pairs of engine constants fitted to the operator's benchmark
    (``benchfit.calibration``): every candidate is built with them; empty: the datasheet's."""

    def price(self, gpu: str) -> float | None:
        return dict(self.prices).get(gpu, GPUS[gpu].price_per_gpu_hour)

    @property
    def budget(self) -> float:
        return self.sizing.budget(self.promises)


@dataclass(frozen=True)
class Outcome:
    """One candidate screened: ``status`` is "ok", "does not fit" or "misses the promises"
    (with ``reason``); the numbers are NaN unless it is "ok"."""

    candidate: Candidate
    status: str
    reason: str = ""
    mu_star: float = math.nan
    mu_star_stderr: float = math.nan
    ttft_p90_s: float = math.nan
    tpot_p90_s: float = math.nan
    policy: str = ""
    replica_hours: float = math.nan
    peak_replicas: float = math.nan
    minutes_short: float = math.nan
    excess_share: float = math.nan
    """Share of requests arriving beyond capacity under the recommended policy."""
    price_per_replica_hour: float = math.nan
    cost: float = math.nan
    """The recommended policy's bill over the log, in the GPUs' currency."""
    per_million_input: float = math.nan
    per_million_output: float = math.nan
    pareto: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def within(self, budget: float) -> bool:
        """Keeps the promises (ok) and leaves at most ``budget`` of requests beyond capacity."""
        return self.ok and self.excess_share <= budget


def p99_request_tokens(lengths) -> float:
    """Prompt + answer tokens of the 99th-percentile request of a log or a mix (a sample of
    20,000): what a candidate's KV cache must hold."""
    if isinstance(lengths, TraceFile):
        tokens = lengths.prompt + lengths.output
    else:
        prompt, output = lengths.sample(20_000, np.random.default_rng(0))
        tokens = prompt + output
    return float(np.percentile(tokens, 99))


def evaluate(
    candidate: Candidate,
    model,
    lengths,
    rate,
    settings: Settings,
    p99: float | None = None,
    context: int | None = None,
) -> Outcome:
    """Screen one candidate on ``lengths`` (a log or a mix) and per-minute ``rate``; ``p99``
    is ``p99_request_tokens(lengths)`` and ``context`` ``server.max_model_len(lengths)``,
    computed here unless given (``search`` computes them once for all its candidates). A
    configuration the engine would refuse to start is refused first, with its reason."""
    shape = MODELS[model] if isinstance(model, str) else model
    if context is None:
        context = max_model_len(lengths, shape.max_context)
    refusal = vllm_refusal(candidate.batch, candidate.token_budget, candidate.chunked, context)
    if refusal:
        return Outcome(candidate, "does not fit", refusal)
    shape = MODELS[model] if isinstance(model, str) else model
    if shape.kv_heads % candidate.gpus:
        return Outcome(
            candidate,
            "does not fit",
            f"{shape.kv_heads} KV heads do not split over {candidate.gpus} GPUs",
        )
    try:
        replica = candidate.replica(shape, settings.calibration)
    except ValueError as err:
        return Outcome(candidate, "does not fit", str(err))
    if p99 is None:
        p99 = p99_request_tokens(lengths)
    if replica.kv_capacity_tokens < p99:
        return Outcome(
            candidate,
            "does not fit",
            f"its KV cache holds {replica.kv_capacity_tokens:,.0f} tokens, less than the "
            f"99th-percentile request's {p99:,.0f}",
        )
    price = settings.price(candidate.gpu)
    if price is None:
        return Outcome(candidate, "does not fit", f"{candidate.gpu} has no price: pass one")
    try:
        point = operating_point(
            lengths,
            replica,
            sizing=settings.sizing,
            promises=settings.promises,
            n_requests=settings.n_requests,
            seed=settings.seed,
            grid_points=SEARCH_GRID_POINTS,
            resolution_share=SEARCH_RESOLUTION,
        )
    except ValueError as err:
        return Outcome(candidate, "misses the promises", str(err))
    per_hour = replica_hour_price(price, candidate.gpus)
    rows = replay(
        rate,
        settings.sizing.at(point.mu_star),
        startup=settings.startup,
        pricing=Pricing(per_hour, point.mean_output),
    )
    best, _ = recommend(rows, settings.sizing, settings.promises)
    priced = best.priced
    per_in, per_out = bill_by_phase(priced, point, phase_seconds_at(point, replica))
    return Outcome(
        candidate,
        "ok",
        mu_star=point.mu_star,
        mu_star_stderr=float(point.mu_star_stderr or 0.0),
        ttft_p90_s=point.ttft_p90_s,
        tpot_p90_s=point.tpot_p90_s,
        policy=best.policy.name,
        replica_hours=best.result.paid_hours,
        peak_replicas=float(best.result.paid.max()),
        minutes_short=best.result.uncovered_minutes,
        excess_share=best.result.excess_fraction,
        price_per_replica_hour=per_hour,
        cost=priced.cost,
        per_million_input=per_in,
        per_million_output=per_out,
    )


def pareto_front(outcomes: list[Outcome]) -> list[Outcome]:
    """The ok outcomes that no other ok outcome beats on the bill, TTFT p90 and TPOT p90 at
    once (at least as good on all three and better on one)."""
    ok = [o for o in outcomes if o.ok]
    keys = [(o.cost, o.ttft_p90_s, o.tpot_p90_s) for o in ok]

    def dominated(k) -> bool:
        return any(all(a <= b for a, b in zip(q, k, strict=True)) and q != k for q in keys)

    return [o for o, k in zip(ok, keys, strict=True) if not dominated(k)]


@dataclass(frozen=True)
class SearchResult:
    outcomes: list[Outcome]
    """Every candidate, in the grid's order, the Pareto front marked."""
    best: Outcome | None
    """The cheapest that keeps the promises within the budget; None if none does."""
    budget: float
    why: str
    context: int = 0
    """The ``max_model_len`` the servers are started with: the log's longest request
    (``server.max_model_len``)."""


def _evaluate_args(args):
    return evaluate(*args)


def search(
    traffic,
    model: ModelShape | str,
    candidates: list[Candidate] | None = None,
    *,
    lengths: TraceFile | LengthMix | None = None,
    settings: Settings | None = None,
    jobs: int | None = None,
    dask: str | object | None = None,
    progress=None,
) -> SearchResult:
    """Screen ``candidates`` (the default ``grid()``) for ``traffic`` (a log or a per-minute
    rate series, with ``lengths`` or the Azure conversation mix) and pick the answer.

    ``jobs`` processes on this machine (default: ``core.parallel.jobs()``, the CPUs this
    process may use; 1 runs in this process), or the Dask cluster at ``dask`` (a scheduler
    address, or a ``distributed.Client``). ``progress``, if given, is called with the share
    done after each candidate."""
    settings = settings or Settings()
    candidates = grid() if candidates is None else list(candidates)
    if not candidates:
        raise ValueError("candidates must name at least one configuration")
    if isinstance(traffic, TraceFile):
        rate = traffic.rate_per_minute()
        lengths = lengths or traffic
    else:
        rate = _check.rates("traffic", traffic)
        lengths = lengths or AZURE_CONVERSATION
    if not rate.any():
        raise ValueError("traffic holds no requests")
    p99 = p99_request_tokens(lengths)
    shape = MODELS[model] if isinstance(model, str) else model
    context = max_model_len(lengths, shape.max_context)
    work = [(c, model, lengths, rate, settings, p99, context) for c in candidates]
    outcomes = _run(work, jobs, dask, progress)
    front = {id(o) for o in pareto_front(outcomes)}
    outcomes = [replace(o, pareto=id(o) in front) for o in outcomes]
    budget = settings.budget
    within = [o for o in outcomes if o.within(budget)]
    if within:
        best = min(within, key=lambda o: (o.cost, o.candidate))
        why = (
            f"the cheapest bill of the {len(within)} candidates that keep the promises and "
            f"leave at most {budget:.2%} of requests beyond capacity"
        )
    else:
        best, why = (
            None,
            (
                "no candidate keeps the promises within the budget: loosen the promises, raise "
                "--short-budget, or add larger GPUs"
            ),
        )
    return SearchResult(outcomes, best, budget, why, context)


def _run(work, jobs, dask, progress) -> list[Outcome]:
    if dask is not None:
        return _run_dask(work, dask, progress)
    jobs = None if jobs is None else _check.integer("jobs", jobs, minimum=1)
    return parallel.fork_map(_evaluate_args, work, workers=jobs, progress=progress)


def _run_dask(work, dask, progress) -> list[Outcome]:
    from distributed import Client, as_completed

    client = dask if isinstance(dask, Client) else Client(dask)
    try:
        futures = [client.submit(_evaluate_args, args, pure=False) for args in work]
        done = 0
        for _ in as_completed(futures):
            done += 1
            if progress is not None:
                progress(done / len(futures))
        return client.gather(futures)
    finally:
        if client is not dask:
            client.close()

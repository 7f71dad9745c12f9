"""The configuration search (planner.search, `replicaplan search`)."""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replicaplan.core.promises import Promises
from replicaplan.interface import search_report
from replicaplan.interface.cli import main
from replicaplan.planner import search as S
from replicaplan.serving.catalogue import GPU, GPUS, MODELS
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic import logs

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LOG = ROOT / "data/azure-llm-inference-2023/conv_sample.csv"
QUICK = S.Settings(n_requests=600)


@pytest.fixture(scope="module")
def log():
    return logs.read_trace(SAMPLE_LOG)


def test_candidates_that_cannot_fit_are_refused_with_their_reason(log):
    """70B's 141 GB of weights on one L40S; 8 KV heads over 3 GPUs; a card whose memory leaves
    a cache smaller than one long request (8B's 16.06 GB of weights, vLLM's 1.79 GiB of
    non-torch memory and 0.315 GiB of activations for a 2,048-token step in 0.9 × 20.7 GB of
    memory: 0.32 GB of cache, about 2,400 tokens of 131 kB, short of the log's 99th-percentile
    request)."""
    tight = GPU("tight", 20.7e9, 1e12, 1e14, 1e11, 1.0)
    GPUS["tight-test"] = tight
    try:
        cases = [
            (S.Candidate("l40s", 1, 64, 2048, True), "llama-3-70b", "do not fit in 1 × L40S"),
            (
                S.Candidate("a100-80gb", 3, 64, 2048, True),
                "llama-3-8b",
                "8 KV heads do not split over 3",
            ),
            (S.Candidate("tight-test", 1, 64, 2048, True), "llama-3-8b", "KV cache holds"),
        ]
        for candidate, model, reason in cases:
            out = S.evaluate(candidate, model, log, log.rate_per_minute(), QUICK)
            assert out.status == "does not fit" and reason in out.reason, out.reason
            assert math.isnan(out.cost) and not out.within(1.0)
    finally:
        del GPUS["tight-test"]
    capacity = ReplicaModel.from_hardware("llama-3-8b", tight).kv_capacity_tokens
    reserve = (1.79 + 1.26 / 4) * 2**30
    weights = MODELS["llama-3-8b"].weight_bytes
    assert capacity == math.floor((0.9 * 20.7e9 - weights - reserve) / 131072)
    assert capacity < np.percentile(log.prompt + log.output, 99)


def test_promises_no_load_meets_are_listed_as_such(log):
    strict = replace(QUICK, promises=Promises(tpot_slo_s=0.001))
    out = S.evaluate(
        S.Candidate("l40s", 1, 64, 2048, True), "llama-3-8b", log, log.rate_per_minute(), strict
    )
    assert out.status == "misses the promises" and "no load meets them" in out.reason


def test_a_candidate_better_on_every_axis_is_the_answer_and_the_only_front(log):
    """An H100 against an A100 at a price that makes the H100 cheaper per hour too: faster on
    both latencies and cheaper, so it is the answer and dominates the A100 off the front."""
    cands = [
        S.Candidate("a100-80gb", 1, 128, 2048, True),
        S.Candidate("h100-sxm", 1, 128, 2048, True),
    ]
    prices = replace(QUICK, prices=(("a100-80gb", 9.0), ("h100-sxm", 1.0)))
    result = S.search(log, "llama-3-8b", cands, settings=prices, jobs=1)
    a100, h100 = result.outcomes
    assert (
        h100.cost < a100.cost
        and h100.ttft_p90_s < a100.ttft_p90_s
        and h100.tpot_p90_s < a100.tpot_p90_s
    )
    assert result.best is h100 and h100.pareto and not a100.pareto


def _outcome(cost, ttft, tpot):
    c = S.Candidate("l40s", 1, 64, 2048, True)
    return S.Outcome(c, "ok", cost=cost, ttft_p90_s=ttft, tpot_p90_s=tpot)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(*[st.integers(0, 6)] * 3), min_size=1, max_size=25))
def test_the_pareto_front_holds_no_dominated_point_and_misses_none(points):
    """Brute force: a point is on the front exactly when no point is at least as good on every
    axis and better on one."""
    outcomes = [_outcome(*p) for p in points]
    front = S.pareto_front(outcomes)
    keys = [(o.cost, o.ttft_p90_s, o.tpot_p90_s) for o in front]
    for p in points:
        beaten = any(all(q[i] <= p[i] for i in range(3)) and q != p for q in points)
        assert (p in keys) == (not beaten)


@pytest.mark.slow
def test_serial_pool_and_a_dask_cluster_give_the_same_results_bit_for_bit(log):
    from distributed import Client, LocalCluster

    cands = S.grid(
        gpus=("a100-80gb", "l40s"),
        gpus_per_replica=(1, 2),
        batches=(64,),
        token_budgets=(2048,),
        chunked=(True,),
    )
    serial = S.search(log, "llama-3-8b", cands, settings=QUICK, jobs=1)
    pooled = S.search(log, "llama-3-8b", cands, settings=QUICK, jobs=2)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        with Client(cluster) as client:
            clustered = S.search(log, "llama-3-8b", cands, settings=QUICK, dask=client)
    dump = [
        json.dumps(search_report.summary(r), sort_keys=True) for r in (serial, pooled, clustered)
    ]
    assert dump[0] == dump[1] == dump[2]
    assert all(o.ok for o in serial.outcomes)


@pytest.mark.slow
def test_the_answer_is_planned_as_replicaplan_plan_plans_it(capsys, tmp_path):
    """`search --json` on a small grid, then `plan` on the answer's configuration: the same plan,
    field for field, and the search's report holds its page and figure beside the plan's."""
    grid = [
        "--gpu-grid",
        "l40s,a100-80gb",
        "--gpus-grid",
        "1",
        "--batch-grid",
        "128",
        "--budget-grid",
        "4096",
    ]
    args = ["search", "--log", str(SAMPLE_LOG), "--model", "llama-3-8b", *grid, "--requests", "600"]
    assert main([*args, "--json", "--jobs", "1", "--report", str(tmp_path / "rep")]) == 0
    got = json.loads(capsys.readouterr().out)
    best = got["best"]
    assert best["status"] == "ok" and got["plan"]["recommended"]["short_budget"] == 0.01
    replan = [
        "plan",
        "--log",
        str(SAMPLE_LOG),
        "--model",
        "llama-3-8b",
        "--gpu",
        best["gpu"],
        "--gpus",
        str(best["gpus"]),
        "--batch",
        str(best["batch"]),
        "--token-budget",
        str(best["token_budget"]),
        "--prefill",
        best["prefill"],
        "--json",
    ]
    assert main(replan) == 0
    assert json.loads(capsys.readouterr().out) == got["plan"]
    names = sorted(p.name for p in (tmp_path / "rep").iterdir())
    assert {"pareto.png", "search.md", "report.md", "hpa.yaml"} <= set(names)
    page = (tmp_path / "rep" / "search.md").read_text()
    assert "The answer: **" in page and "](pareto.png)" in page


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--gpu-grid", "a100,h100-sxm"], "--gpu-grid: unknown 'a100'"),
        (["--gpus-grid", "0"], "--gpus-grid: '0' is not a whole number from 1 to 64"),
        (["--batch-grid", "x"], "--batch-grid: 'x' is not a whole number"),
        (["--prefill-grid", "fast"], "--prefill-grid: unknown 'fast'"),
        (["--gpu-price", "a100-80gb=-1"], "--gpu-price: must be a number in (0, ∞), got '-1'"),
        (["--gpu-price", "tpu=2"], "--gpu-price: must be GPU=PRICE"),
        (["--requests", "10"], "--requests: must be a whole number from 200"),
        (["--jobs", "0"], "--jobs: must be a whole number from 1"),
        (["--model", "gpt-9"], "--model: unknown name 'gpt-9'"),
        (["--short-budget", "2"], "--short-budget: must be a number in [0, 1)"),
    ],
)
def test_bad_search_options_exit_2_and_write_nothing(capsys, tmp_path, extra, match):
    args = ["search", "--log", str(SAMPLE_LOG), "--model", "llama-3-8b", *extra]
    args += ["--manifest", str(tmp_path / "h.yaml")]
    assert main(args) == 2
    assert match in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_search_nothing_passes_lists_why_and_writes_nothing(capsys, tmp_path):
    args = ["search", "--log", str(SAMPLE_LOG), "--model", "llama-3-70b", "--gpu-grid", "l40s"]
    args += [
        "--gpus-grid",
        "1",
        "--batch-grid",
        "64",
        "--budget-grid",
        "2048",
        "--prefill-grid",
        "chunked",
    ]
    assert main([*args, "--manifest", str(tmp_path / "h.yaml")]) == 2
    out = capsys.readouterr().out
    assert "does not fit" in out and "answer: none" in out and "nothing written" in out
    assert "use more GPUs (--gpus-grid)" in out and "(gpus)" not in out  # named by its flag
    assert list(tmp_path.iterdir()) == []


def test_a_parquet_log_searches_like_its_csv(tmp_path, log):
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = list(csv.DictReader(SAMPLE_LOG.open()))
    table = pa.table(
        {
            "TIMESTAMP": [r["TIMESTAMP"] for r in rows],
            "ContextTokens": [int(r["ContextTokens"]) for r in rows],
            "GeneratedTokens": [int(r["GeneratedTokens"]) for r in rows],
        }
    )
    pq.write_table(table, tmp_path / "log.parquet")
    parquet = logs.read_trace(tmp_path / "log.parquet")
    for name in ("arrival", "prompt", "output"):
        assert (getattr(parquet, name) == getattr(log, name)).all()
    assert parquet.start == log.start


@pytest.mark.slow
def test_an_unreachable_cluster_is_refused_by_name(capsys, tmp_path):
    args = [
        "search",
        "--log",
        str(SAMPLE_LOG),
        "--model",
        "llama-3-8b",
        "--dask",
        "tcp://127.0.0.1:1",
    ]
    assert main([*args, "--manifest", str(tmp_path / "h.yaml")]) == 2
    assert "--dask: cannot reach the scheduler at tcp://127.0.0.1:1" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("trace", ["conv_sample.csv", "code_sample.csv"])
def test_the_answer_on_both_azure_traces_is_one_vllm_starts(trace, capsys):
    """The default grid's budgets and batches on each Azure trace: every candidate vLLM would
    refuse is refused with its reason, the answer is one it starts, and the printed command,
    the KEDA query and the plan agree on the model's name, the namespace and the GPUs."""
    from replicaplan.planner.server import vllm_refusal

    log = SAMPLE_LOG.with_name(trace)
    args = ["search", "--log", str(log), "--model", "llama-3-8b", "--gpu-grid", "l40s"]
    args += ["--gpus-grid", "1,2", "--batch-grid", "128", "--budget-grid", "2048,8192"]
    args += ["--served-model", "meta-llama/Meta-Llama-3-8B-Instruct", "--namespace", "serving"]
    assert main([*args, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    argv = shlex.split(got["server_command"])
    context = int(argv[argv.index("--max-model-len") + 1])
    for row in got["candidates"]:
        refusal = vllm_refusal(
            row["batch"], row["token_budget"], row["prefill"] == "chunked", context
        )
        if refusal:
            assert row["status"] == "does not fit" and row["reason"] == refusal
    best = got["best"]
    assert (
        vllm_refusal(best["batch"], best["token_budget"], best["prefill"] == "chunked", context)
        is None
    )
    flags = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert flags["--tensor-parallel-size"] == str(best["gpus"])
    assert flags["--max-num-seqs"] == str(best["batch"])
    assert flags["--max-num-batched-tokens"] == str(best["token_budget"])
    query = got["plan"]["keda"]["spec"]["triggers"][0]["metadata"]["query"]
    assert f'model_name="{flags["--served-model-name"]}"' in query
    assert 'namespace="serving"' in query

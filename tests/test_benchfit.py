"""A replica fitted to a benchmark run: the formats read (vLLM's and GuideLLM's result files,
written here in their own shapes), a known server recovered, bad files named, the replica file
read back by the planner."""

import json

import numpy as np
import pytest

from replicaplan.interface.cli import main
from replicaplan.serving.engine import simulate_closed, simulate_open
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation import benchfit

# the "server": a replica whose step differs from the datasheet's on every fitted parameter
TRUE = ReplicaModel.from_hardware(
    "llama-3-8b",
    "a100-80gb",
    step_floor_s=3e-3,
    seq_step_s=20e-6,
    bandwidth_efficiency=0.6,
    prefill_efficiency=0.5,
)


def _requests(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(50, 2000, n), rng.integers(20, 400, n)


def vllm_file(path, trace, *, concurrency=None, rate="inf", model="meta-llama/Meta-Llama-3-8B"):
    """A result in the shape `vllm bench serve --save-result --save-detailed` writes: per
    request its lengths, its TTFT and the gaps of its stream (here one chunk of 4 tokens a gap,
    as a server that streams in chunks sends them)."""
    itls = []
    for tpot, out in zip(trace.tpot, trace.output, strict=True):
        gaps = max((int(out) - 1) // 4, 1) if out > 1 else 0
        itls.append([float(tpot) * (int(out) - 1) / gaps] * gaps if gaps else [])
    data = {
        "date": "20261204-120000",
        "backend": "vllm",
        "model_id": model,
        "num_prompts": int(trace.prompt.size),
        "request_rate": rate,
        "max_concurrency": concurrency,
        "input_lens": trace.prompt.tolist(),
        "output_lens": trace.output.tolist(),
        "ttfts": trace.ttft.tolist(),
        "itls": itls,
        "errors": [""] * int(trace.prompt.size),
    }
    path.write_text(json.dumps(data))
    return path


def guidellm_file(path, trace):
    """A GuideLLM report: benchmarks, each with requests.successful, each request with its
    tokens and its scheduler timings (request_start, first_iteration, last_iteration)."""
    requests = []
    for k in range(trace.prompt.size):
        start = float(trace.arrival[k])
        requests.append(
            {
                "type_": "generative_request_stats",
                "request_id": str(k),
                "prompt_tokens": int(trace.prompt[k]),
                "output_tokens": int(trace.output[k]),
                "scheduler_info": {
                    "request_timings": {
                        "request_start": start + 1000.0,
                        "first_iteration": float(trace.first_token[k]) + 1000.0,
                        "last_iteration": float(trace.end[k]) + 1000.0,
                        "request_end": float(trace.end[k]) + 1000.0,
                    }
                },
            }
        )
    data = {"benchmarks": [{"type_": "generative_benchmark", "requests": {"successful": requests}}]}
    path.write_text(json.dumps(data))
    return path


def _within(fitted, measured, rel):
    for key in ("ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90"):
        assert fitted[key] == pytest.approx(measured[key], rel=rel), key


def test_a_known_server_is_recovered_from_its_vllm_result(tmp_path):
    prompt, output = _requests()
    trace = simulate_closed(TRUE, 32, np.zeros(prompt.size), prompt, output)
    bench = benchfit.read_bench(vllm_file(tmp_path / "b.json", trace, concurrency=32))
    assert bench.concurrency == 32 and bench.prompt.size == prompt.size
    # the stream's chunks: TPOT is the time after the first token over the tokens after it
    assert np.nanmedian(bench.tpot) == pytest.approx(np.median(trace.tpot[trace.output > 1]))
    start = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb")  # the datasheet's guess
    fit = benchfit.fit(bench, start)
    _within(fit.fitted, fit.measured, rel=0.05)
    assert fit.params["step_floor_s"][0] == pytest.approx(3e-3, rel=0.02)
    assert fit.params["bandwidth"][0] == pytest.approx(0.6 * 2.039e12, rel=0.02)
    assert fit.params["prefill_flops"][0] == pytest.approx(0.5 * 312e12, rel=0.05)
    assert all(se >= 0 for _, se in fit.params.values())
    assert fit.model.source == "fitted to b.json"


def test_a_guidellm_report_at_a_rate_is_fitted_within_five_percent(tmp_path):
    prompt, output = _requests(400, seed=1)
    arrival = np.cumsum(np.random.default_rng(2).exponential(1 / 4.0, prompt.size))
    trace = simulate_open(TRUE, arrival, prompt, output)
    bench = benchfit.read_bench(guidellm_file(tmp_path / "benchmarks.json", trace))
    # the report records when each request was sent: the replay sends them at the same times
    assert bench.arrival == pytest.approx(arrival - arrival[0])
    fit = benchfit.fit(bench, ReplicaModel.from_hardware("llama-3-8b", "a100-80gb"))
    _within(fit.fitted, fit.measured, rel=0.05)


def test_the_command_fits_saves_and_the_plan_reads_it_back(tmp_path, capsys):
    prompt, output = _requests()
    trace = simulate_closed(TRUE, 32, np.zeros(prompt.size), prompt, output)
    bench = vllm_file(tmp_path / "b.json", trace, concurrency=32)
    out = tmp_path / "replica.json"
    args = ["fit", "--bench", str(bench), "--model", "llama-3-8b", "--gpu", "a100-80gb"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ms floor t_0" in printed and "written:" in printed
    replica = benchfit.load(out)
    assert replica.step_floor_s == pytest.approx(3e-3, rel=0.02)
    log = tmp_path.parent / "log.csv"
    log = tmp_path / "log.csv"
    rows = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    rows += [f"{t * 20:.3f},{p},{o}" for t, (p, o) in enumerate(zip(prompt, output, strict=True))]
    log.write_text("\n".join(rows) + "\n")
    command = ["plan", "--log", str(log), "--replica", str(out), "--gpu-price", "2", "--json"]
    assert main(command) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["replica"] == "fitted to b.json"


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"input_lens": [1, 2], "output_lens": [3', "truncated"),
        ('{"something": 1}', "neither a vLLM result"),
        ('{"input_lens": [1], "output_lens": [1, 2], "ttfts": [0.1], "itls": [[]]}', "one entry"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_bad_bench_files_are_named(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    args = ["fit", "--bench", str(bad), "--model", "llama-3-8b", "--gpu", "a100-80gb"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and message in err and "Traceback" not in err


def test_a_benchmark_of_another_model_is_refused(tmp_path, capsys):
    prompt, output = _requests(50)
    trace = simulate_closed(TRUE, 8, np.zeros(prompt.size), prompt, output)
    bench = vllm_file(tmp_path / "b.json", trace, model="meta-llama/Meta-Llama-3-70B-Instruct")
    args = ["fit", "--bench", str(bench), "--model", "llama-3-8b", "--gpu", "a100-80gb"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Meta-Llama-3-70B-Instruct" in err and "--model" in err


def test_the_replica_file_is_refused_with_other_replica_options(tmp_path, capsys):
    bad = tmp_path / "r.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="format"):
        benchfit.load(bad)
    log = tmp_path / "log.csv"
    log.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "".join(
        f"{t * 30},100,50\n" for t in range(200)))  # fmt: skip
    args = ["plan", "--log", str(log), "--replica", str(bad), "--model", "llama-3-8b"]
    assert main(args) == 2
    assert "--replica carries the whole replica: drop --model" in capsys.readouterr().err
    assert main(["plan", "--log", str(log), "--replica", str(bad)]) == 2
    assert "--replica" in capsys.readouterr().err


def test_model_names_match_across_spellings():
    from replicaplan.serving.catalogue import MODELS

    bench = benchfit.Bench(*(np.ones(10),) * 4, 1.0, None, "meta-llama/Llama-3.1-8B-Instruct", "x")
    benchfit.check_model(bench, MODELS["llama-3.1-8b"])
    with pytest.raises(ValueError, match="not --model"):
        benchfit.check_model(bench, MODELS["llama-3-8b"])


def test_the_fit_calibrates_every_configuration_of_a_search(tmp_path, capsys):
    """The fitted constants as shares of the card's peaks (0.6 of the A100's bandwidth, 0.5 of
    its FLOP/s, the 3 ms floor): search --replica builds every candidate with them, so the
    A100's own configuration comes out as the fitted server does, slower than the datasheet's."""
    from replicaplan.planner import search
    from replicaplan.serving.catalogue import GPUS

    prompt, output = _requests()
    trace = simulate_closed(TRUE, 32, np.zeros(prompt.size), prompt, output)
    bench = vllm_file(tmp_path / "b.json", trace, concurrency=32)
    out = tmp_path / "replica.json"
    args = ["fit", "--bench", str(bench), "--model", "llama-3-8b", "--gpu", "a100-80gb"]
    assert main([*args, "--out", str(out)]) == 0
    capsys.readouterr()
    found = benchfit.read_calibration(out)
    assert found["bandwidth_efficiency"] == pytest.approx(0.6, rel=0.02)
    assert found["prefill_efficiency"] == pytest.approx(0.5, rel=0.05)
    assert found["step_floor_s"] == pytest.approx(3e-3, rel=0.02)
    candidate = search.Candidate("a100-80gb", 1, 256, 2048, True)
    calibrated = candidate.replica("llama-3-8b", tuple(found.items()))
    assert calibrated.bandwidth == pytest.approx(0.6 * GPUS["a100-80gb"].bandwidth, rel=0.02)
    assert calibrated.step_floor_s == pytest.approx(TRUE.step_floor_s, rel=0.02)
    datasheet = candidate.replica("llama-3-8b")
    assert calibrated.tpot_full_s > datasheet.tpot_full_s
    # a replica file without the calibration (another writer, or an old fit) is named
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"format": benchfit.FORMAT, "replica": {}}))
    with pytest.raises(ValueError, match="no calibration"):
        benchfit.read_calibration(bare)


def test_the_fit_never_writes_over_its_benchmark(tmp_path, capsys):
    prompt, output = _requests(50)
    trace = simulate_closed(TRUE, 8, np.zeros(prompt.size), prompt, output)
    bench = vllm_file(tmp_path / "b.json", trace, concurrency=8)
    before = bench.read_bytes()
    args = ["fit", "--bench", str(bench), "--model", "llama-3-8b", "--gpu", "a100-80gb"]
    assert main([*args, "--out", str(bench)]) == 2
    assert "--out: " in capsys.readouterr().err and bench.read_bytes() == before

"""The command line's inputs, checked once where they enter (faces/options.py): every option of
every command, given a bad value, exits 2 with one line that names the flag, before any work and
with nothing written; the argument types hold their ranges at the edges."""

import argparse
import math
from pathlib import Path

import pytest

from replicaplan.interface import options as opt
from replicaplan.interface.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LOG = ROOT / "data" / "azure-llm-inference-2023" / "conv_sample.csv"
BENCH = ROOT / "tests" / "data" / "vllm_bench_small.json"

# what each command needs to parse at all: a bad value is then the only thing wrong
REQUIRED = {
    "day": [],
    "capacity": [],
    "cost": [],
    "roofline": [],
    "plan": ["--log", str(SAMPLE_LOG)],
    "fit": ["--bench", str(SAMPLE_LOG), "--model", "llama-3-8b", "--gpu", "h100-sxm"],
    "search": ["--log", str(SAMPLE_LOG), "--model", "llama-3-8b"],
}

MISSING = "/nonexistent-replicaplan/file.csv"
# a bad value for every option that takes one (flag -> value); a file option gets a path that
# does not exist, an output one in a folder that does not exist
BAD = {
    "--mu-star": "0",
    "--target": "1.5",
    "--startup": "-1",
    "--reserve": "2.5",
    "--model": "gpt-9",
    "--mu": "-3",
    "--tau": "nan",
    "--rates": "5:1:1",
    "--resolution": "0",
    "--quota": "1",
    "--ttft-slo": "-1",
    "--tpot-slo": "inf",
    "--mix": "zipf",
    "--requests": "10",
    "--precision": "0",
    "--seed": "-1",
    "--replica-price": "0",
    "--tokens-per-s": "abc",
    "--utilization": "0",
    "--discount": "1",
    "--lost": "-0.1",
    "--params": "-8e9",
    "--bytes-per-param": "0",
    "--layers": "32.5",
    "--kv-heads": "0",
    "--head-dim": "1e9",
    "--kv-bytes": "nan",
    "--batch": "0",
    "--context": "-1",
    "--tpot": "0",
    "--peak-flops": "-inf",
    "--peak-bandwidth": "x",
    "--log": MISSING,
    "--lengths": MISSING,
    "--gpu": "a100",
    "--gpus": "65",
    "--dtype": "int4",
    "--kv-dtype": "int4",
    "--token-budget": "0",
    "--prefill": "fast",
    "--tpot-point": "1,2",
    "--ttft-point": "1,-2",
    "--gpu-price": "-2",
    "--signal": "gpu",
    "--short-budget": "1",
    "--max-replicas": str(2**31),
    "--name": "My_LLM",
    "--metric": "in-flight",
    "--prometheus": "http://:9090",
    "--engine": "tgi",
    "--namespace": "Not_A_Label",
    "--served-model": 'a"b',
    "--adapter": MISSING + ".yaml",
    "--manifest": MISSING + ".yaml",
    "--keda": MISSING + ".yaml",
    "--report": MISSING,
    "--report-format": "pdf",
    "--replica": MISSING,
    "--bench": MISSING,
    "--out": MISSING + ".json",
    "--gpu-grid": "a100",
    "--gpus-grid": "0",
    "--batch-grid": "x",
    "--budget-grid": "",
    "--prefill-grid": "fast",
    "--jobs": "0",
    "--dask": "scheduler",
    "--deployment": MISSING + ".yaml",
    "--image": "vllm openai",
    "--min-replicas": "-1",
    "--wake-query": "sum(rate(x[1m]",
    "--start": "2024-03-04T00:00",
    "--timezone": "Europe/Atlantis",
    "--polling-interval": "0",
    "--cooldown-period": "-5",
}
# per command where a flag's bad value differs (a flag that takes another kind there)
BAD_IN = {("search", "--gpu-price"): "tpu=2", ("capacity", "--model"): "gpu"}


def _options():
    """(command, flag) for every option that takes a value, read off the parser itself."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, subparser in sub.choices.items():
        for action in subparser._actions:
            if action.option_strings and action.nargs != 0:
                yield command, action.option_strings[0]


OPTIONS = sorted(_options())


def test_every_option_has_a_bad_value_here():
    """A new option without a bad value in this file fails here, so none goes unchecked."""
    missing = sorted({flag for _, flag in OPTIONS} - set(BAD))
    assert not missing, missing
    assert len(OPTIONS) > 80


@pytest.mark.parametrize("command, flag", OPTIONS, ids=lambda x: x)
def test_a_bad_value_is_refused_by_its_flag_before_any_work(command, flag, capsys, tmp_path):
    bad = BAD_IN.get((command, flag), BAD[flag])
    required = REQUIRED[command]
    if flag in required:  # replace the required option's value rather than give it twice
        i = required.index(flag)
        required = [*required[:i], flag, bad, *required[i + 2 :]]
        extra = []
    else:
        extra = [flag, bad]
    if flag == "--lengths":  # --lengths goes with --rates
        required = ["--rates" if x == "--log" else x for x in required]
    if flag == "--gpu" and command == "plan":  # a GPU goes with a model
        extra += ["--model", "llama-3-8b"]
    assert main([command, *required, *extra]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1, err
    assert f"argument {flag}" in lines[0] or f"{flag}:" in lines[0], lines[0]
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kind, good, bad",
    [
        (opt.positive, ["1e-300", "3", "1e300"], ["0", "-1", "nan", "inf", "-inf", "1e400", "x"]),
        (opt.share, ["1", "0.5", "1e-9"], ["0", "1.0000001", "-0.5", "nan"]),
        (opt.open_share, ["0.5", "0.999"], ["0", "1", "nan"]),
        (opt.number(0.0, 1.0, high_open=True), ["0", "0.999"], ["1", "-1e-9"]),
        (opt.whole(0, 1440), ["0", "1440", "8"], ["-1", "1441", "8.0", "1e3", "eight", ""]),
    ],
)
def test_the_types_hold_their_ranges_at_the_edges(kind, good, bad):
    for text in good:
        assert kind(text) == pytest.approx(float(text))
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match=repr(text).replace("+", r"\+")):
            kind(text)


def test_a_rate_grid_is_read_inclusive_and_refused_when_empty_or_endless():
    assert opt.rate_grid("1:2:0.5") == [1.0, 1.5, 2.0]
    assert opt.rate_grid("6,12") == [6.0, 12.0]
    for text in ("0,1", "2:1:0.5", "1:2:0", "1:1e9:1e-3", "1:inf:1", "a,b"):
        with pytest.raises(argparse.ArgumentTypeError, match="must look like"):
            opt.rate_grid(text)


def test_names_and_addresses_are_the_apis_own():
    assert opt.namespace("llm-prod") == "llm-prod"
    assert opt.object_name("llm.v2") == "llm.v2"
    assert opt.prometheus("https://prom.example:9090/") == "https://prom.example:9090/"
    assert opt.dask_address("tcp://10.0.0.1:8786") == "tcp://10.0.0.1:8786"
    assert opt.label_value("meta-llama/Llama-3.1-8B-Instruct")
    for kind, text in [
        (opt.namespace, "a" * 64),
        (opt.namespace, "llm.v2"),  # a label has no dots
        (opt.object_name, "-llm"),
        (opt.metric, "9lives"),
        (opt.prometheus, "prometheus:9090"),
        (opt.prometheus, "http:///path"),
        (opt.prometheus, "http://host:99999"),
        (opt.dask_address, "tcp://host"),
        (opt.label_value, "a\nb"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError):
            kind(text)


def test_a_gpu_price_names_a_gpu_of_the_catalogue():
    assert opt.gpu_price("h100-sxm=2.49") == ("h100-sxm", 2.49)
    for text in ("h100=2", "h100-sxm", "h100-sxm=0", "h100-sxm=inf"):
        with pytest.raises(argparse.ArgumentTypeError):
            opt.gpu_price(text)
    assert not math.isnan(opt.gpu_price("l40s=1e-3")[1])

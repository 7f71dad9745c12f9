import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from replicaplan.faces.cli import main


def test_day_table(capsys):
    assert main(["day"]) == 0
    out = capsys.readouterr().out
    assert "192.0" in out and "96.1" in out
    assert "replicas requested: 2 at 20:59, 7 at 21:00" in out


def test_day_json(capsys):
    assert main(["day", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in rows][0] == "always at peak"
    assert round(rows[4]["paid_hours"], 1) == 96.1
    assert set(rows[0]) == {
        "policy",
        "paid_hours",
        "uncovered_minutes",
        "queued_minutes",
        "excess_fraction",
        "utilization",
    }


def test_day_options_change_the_result(capsys):
    main(["day", "--json", "--startup", "2", "--reserve", "1", "--capacity", "10"])
    rows = json.loads(capsys.readouterr().out)
    assert rows[2]["policy"] == "chase, 2 min start" and rows[2]["uncovered_minutes"] == 2


def test_bad_option_is_a_clear_error(capsys):
    assert main(["day", "--target", "0"]) == 2
    assert "target must lie in (0, 1]" in capsys.readouterr().err


def test_console_script_installed():
    out = subprocess.run(
        [sys.executable, "-m", "replicaplan.faces.cli", "day", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert len(json.loads(out)) == 5


def test_capacity_json_shape(capsys):
    assert main(["capacity", "--rates", "6,12", "--requests", "1000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["quota"] == 0.9 and 6.0 < out["mu_star"] < 12.0
    lo, hi = out["bracket"]
    assert hi - lo <= 0.02 and out["mu_star"] == (lo + hi) / 2
    assert [p["rate"] for p in out["points"]] == [6.0, 12.0]
    assert all({"rate", "conformance", "stderr"} <= set(p) for p in out["points"])


def test_capacity_mm1_matches_the_closed_form(capsys):
    assert (
        main(
            [
                "capacity",
                "--model",
                "mm1",
                "--mu",
                "10",
                "--tau",
                "1",
                "--rates",
                "7:8:0.25",
                "--requests",
                "20000",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    closed = 10 - math.log(10)  # μ − ln 10/τ, derived by hand
    assert out["mu_star_closed_form"] == pytest.approx(closed)
    assert out["mu_star"] == pytest.approx(closed, rel=0.05)
    assert 7.0 < out["bracket"][0] <= out["bracket"][1] < 8.0


@pytest.mark.parametrize("mu, tau", [(25, 0.3), (10, 0.5), (50, 0.2), (3, 3)])
def test_capacity_mm1_default_range_brackets_the_closed_form(capsys, mu, tau):
    assert main(["capacity", "--model", "mm1", "--mu", str(mu), "--tau", str(tau), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mu_star"] == pytest.approx(mu - math.log(10) / tau, rel=0.05)


def test_capacity_says_when_the_range_does_not_bracket(capsys):
    args = ["capacity", "--model", "mm1", "--mu", "25", "--tau", "0.3", "--rates", "1:10:0.5"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "μ* ≥ 10 req/s" in out and "widen --rates" in out and "mu* =" not in out


def test_capacity_table_and_no_capacity(capsys):
    assert main(["capacity", "--rates", "20,30", "--requests", "500"]) == 1
    assert "μ* < 20 req/s" in capsys.readouterr().out


def test_capacity_bad_input(capsys):
    assert main(["capacity", "--rates", "0,1"]) == 2
    assert "rates must all be > 0" in capsys.readouterr().err
    assert main(["capacity", "--model", "mm1", "--rates", "1"]) == 2
    assert "--mu" in capsys.readouterr().err
    assert main(["capacity", "--quota", "1.5", "--rates", "1"]) == 2
    assert "quota" in capsys.readouterr().err


def test_cost_command(capsys):
    assert main(["cost", "--utilization", "0.36", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (
        round(out["cost_per_million"], 2) == 0.60
        and round(out["cost_per_million_at_full_use"], 2) == 0.22
    )
    assert main(["cost", "--discount", "0.2", "--lost", "0.5"]) == 0
    assert "never pays off" in capsys.readouterr().out
    assert main(["cost", "--discount", "0.6", "--lost", "0.1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["spot_pays_off"] is True


def test_cost_bad_input(capsys):
    assert main(["cost", "--utilization", "0"]) == 2
    assert "utilization" in capsys.readouterr().err
    assert main(["cost", "--discount", "0.5"]) == 2
    assert "--lost" in capsys.readouterr().err


def test_roofline_command(capsys):
    assert main(["roofline", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert round(out["mfu"], 3) == 0.041 and round(out["ridge"]) == 333
    assert round(out["intensity_limit"]) == 61 and round(out["ridge_context"]) == 366
    assert main(["roofline", "--bytes-per-param", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mbu_weights_only"] == pytest.approx(
        8e9 / 0.025 / 3e12
    )
    assert main(["roofline", "--batch", "0"]) == 2
    assert "batch" in capsys.readouterr().err


SAMPLE_LOG = Path(__file__).resolve().parents[1] / "data/azure-llm-inference-2023/conv_sample.csv"


def test_plan_on_the_vendored_sample_writes_an_hpa_the_model_reads_back(capsys, tmp_path):
    from replicaplan.autoscalers.manifest import autoscaler_from_manifest

    out_file = tmp_path / "hpa.yaml"
    assert main(["plan", "--log", str(SAMPLE_LOG), "--json", "--manifest", str(out_file)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["requests"] == 3228 and got["minutes"] == 59
    # the sample's 3,228 requests are every sixth of the trace's first hour, so its mean prompt
    # and answer are the trace's (1,155 and 211 tokens, from the full file's published columns)
    assert got["mean_prompt_tokens"] == pytest.approx(1155, rel=0.03)
    assert got["mean_output_tokens"] == pytest.approx(211, rel=0.03)
    # the HPA written holds the printed target per pod (to the milli-unit of a quantity)
    hpa = autoscaler_from_manifest(out_file.read_text())
    assert hpa.target == pytest.approx(got["concurrency_target"], abs=1e-3)
    assert (hpa.min_replicas, hpa.max_replicas) == (got["min_replicas"], got["max_replicas"])


@pytest.mark.parametrize(
    "text, match",
    [
        ("TIMESTAMP,ContextTokens,GeneratedTokens\n5,20,3\n4,20,3\n", "row 3.*earlier"),
        ("TIMESTAMP,ContextTokens\n5,20\n", "missing column"),
        ("TIMESTAMP,ContextTokens,GeneratedTokens\n", "no requests"),
    ],
)
def test_plan_bad_log_exits_2_and_writes_nothing(capsys, tmp_path, text, match):
    log = tmp_path / "log.csv"
    log.write_text(text)
    out_file = tmp_path / "hpa.yaml"
    assert main(["plan", "--log", str(log), "--manifest", str(out_file)]) == 2
    err = capsys.readouterr().err
    assert re.search(match, err) and "log.csv" in err
    assert not out_file.exists() and list(tmp_path.iterdir()) == [log]


def test_plan_missing_file_and_directory(capsys, tmp_path):
    assert main(["plan", "--log", str(tmp_path / "none.csv")]) == 2
    assert "--log: no such file" in capsys.readouterr().err
    args = ["plan", "--log", str(SAMPLE_LOG), "--manifest", str(tmp_path / "no/dir/h.yaml")]
    assert main(args) == 2
    assert "--manifest: no such directory" in capsys.readouterr().err

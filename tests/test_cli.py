import json
import subprocess
import sys

from replicaplan.cli import main


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
    assert set(rows[0]) == {"policy", "paid_hours", "uncovered_minutes", "queued_minutes",
                            "excess_fraction", "utilization"}


def test_day_options_change_the_result(capsys):
    main(["day", "--json", "--startup", "2", "--reserve", "1", "--capacity", "10"])
    rows = json.loads(capsys.readouterr().out)
    assert rows[2]["policy"] == "chase, 2 min start" and rows[2]["uncovered_minutes"] == 2


def test_bad_option_is_a_clear_error(capsys):
    assert main(["day", "--target", "0"]) == 2
    assert "target must lie in (0, 1]" in capsys.readouterr().err


def test_console_script_installed():
    out = subprocess.run([sys.executable, "-m", "replicaplan.cli", "day", "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert len(json.loads(out)) == 5


def test_capacity_json_shape(capsys):
    assert main(["capacity", "--rates", "6,9", "--requests", "1000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["quota"] == 0.9 and out["mu_star"] == 6.0
    assert [p["rate"] for p in out["points"]] == [6.0, 9.0]
    assert all({"rate", "conformance", "stderr"} <= set(p) for p in out["points"])


def test_capacity_mm1_matches_the_closed_form(capsys):
    assert main(["capacity", "--model", "mm1", "--mu", "10", "--tau", "1",
                 "--rates", "7:8:0.25", "--requests", "20000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mu_star"] in (7.5, 7.75)              # the grid points either side of 10 − ln 10 = 7.70


def test_capacity_table_and_no_capacity(capsys):
    assert main(["capacity", "--rates", "20,30", "--requests", "500"]) == 1
    assert "no rate in the grid meets the quota" in capsys.readouterr().out


def test_capacity_bad_input(capsys):
    assert main(["capacity", "--rates", "0,1"]) == 2
    assert "rates must all be > 0" in capsys.readouterr().err
    assert main(["capacity", "--model", "mm1", "--rates", "1"]) == 2
    assert "--mu" in capsys.readouterr().err
    assert main(["capacity", "--quota", "1.5", "--rates", "1"]) == 2
    assert "quota" in capsys.readouterr().err

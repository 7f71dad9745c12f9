"""The vendored synthetic week (tools/synthetic_week.py writes data/synthetic-week)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


WEEK = ROOT / "data/synthetic-week/rates.csv"


def test_the_vendored_week_is_what_its_script_writes():
    import runpy

    script = runpy.run_path(str(ROOT / "tools/synthetic_week.py"))
    assert WEEK.read_text() == script["rows"]()

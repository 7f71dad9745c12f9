"""The opening's power-grid figures (chapters/powergrid.py, beside the chapters)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chapters"))

import powergrid as grid  # noqa: E402


def test_grid_figures():
    # the source's figures: 2,800 MW of 3 kW kettles is "more than 900,000"; Dinorwig's
    # 1,320 MW in 12 s is 110 MW a second
    assert grid.kettles() == pytest.approx(2800e3 / 3)
    assert grid.kettles() > 900_000
    assert grid.ramp_rate() == pytest.approx(1320 / 12)
    with pytest.raises(ValueError, match="kettle_kw"):
        grid.kettles(kettle_kw=0)

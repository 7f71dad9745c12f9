"""The exercises' answers, as the executed chapters glue them, against hand-derived values."""

import json
import math
from pathlib import Path

import pytest

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"


def glued(chapter: str) -> dict:
    """Every number a chapter glues, from its executed notebook."""
    nb = json.loads((CHAPTERS / f"{chapter}.ipynb").read_text())
    out = {}
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook")
            if record:
                out[record["name"]] = float(output["data"][record["mime_prefix"] + "text/plain"])
    return out


def test_opening():
    g = glued("opening")
    assert g["ex1_kettles"] == pytest.approx(2800e3 / 2)  # 2,800 MW over 2 kW kettles
    assert g["ex2_s"] == pytest.approx(2800 / (1320 / 12))  # at Dinorwig's 110 MW/s
    assert g["ex3_replicas"] == math.ceil(42 / (0.8 * 8))  # 42 req/s on 6.4 each: 7
    assert g["ex4_cost"] == pytest.approx(2 / (3600 * 2560 * 0.5) * 1e6)  # 0.434 €


def test_capacity():
    g = glued("capacity")
    assert g["ex1_growth"] == pytest.approx(60 * (3 / 2.5 - 1))  # 12 minutes an hour
    # the law λ = N_u/(W + Z) against the rate the simulation measured
    assert g["ex2_rate"] == pytest.approx(10 / (g["friends_stay"] + 4), rel=1e-12)
    assert g["ex2_rate"] == pytest.approx(g["friends_rate"], rel=0.03)
    assert g["ex3_star"] == pytest.approx(20 - math.log(10) / 0.5)  # 15.39
    assert g["ex4_n"] == 900  # 0.09 / 0.01²


def test_what_to_watch():
    g = glued("what_to_watch")
    assert g["ex1_ask"] == math.ceil(5 * (90 / 5) / 12)  # 7.5 → 8
    assert (g["ex2_lo"], g["ex2_hi"]) == pytest.approx((9.0, 11.0))  # 10 × (1 ∓ 0.1)
    assert g["ex3_l"] == pytest.approx(6.4 * 10)  # L* = ρ*μ*W̄ = 64
    # 100 in flight over the panic window is 10 pods ≥ 2 × 4 ready: panic, max(⌈40/10⌉, 10)
    assert g["ex4_pods"] == 10

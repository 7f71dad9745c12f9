"""The datasheet replica against the published measurements (benchmarks/published): the bands
the model reaches are held, so a change to the step model that moves it away from the world fails
here."""

import math
from pathlib import Path

import pytest

from replicaplan.simulation import published

pytestmark = pytest.mark.slow  # a minute-long simulation fixture

CSV = Path(__file__).resolve().parents[1] / "benchmarks" / "published" / "measurements.csv"


@pytest.fixture(scope="module")
def results():
    return published.compare(CSV)


def test_the_set_is_broad_enough():
    rows = published.read_measurements(CSV)
    assert len(rows) >= 30
    assert len({m.source.split(":")[0] for m in rows}) >= 3
    assert {m.regime for m in rows} == {"saturation", "prefill-heavy", "low-load"}


def test_the_datasheet_replica_is_within_its_bands(results):
    regimes = published.by_regime(results)
    everything = regimes["all"]
    assert everything.gm_error <= 1.15
    assert everything.within_125 >= 0.85
    for name, s in regimes.items():
        assert s.gm_error <= 1.15, name  # none off by more than 1.5x; each within 15 %
    # one row lies beyond 1.5x: the mean TTFT of ten requests sent at once to vLLM 0.6 on an
    # H100, 62 ms published against 34 ms predicted (the server's HTTP, tokenization and
    # scheduling before the first step are not in the replica)
    far = [m for m, _, r in results if abs(math.log(r)) >= math.log(1.5)]
    assert [(m.gpu, m.metric) for m in far] == [("h100-sxm", "mean_ttft_ms")]


def test_an_h200_decodes_a_large_batch_no_faster_than_an_h100(results):
    # the published 128/128 throughputs of Llama 3.1 8B FP8 are within 2 % of each other on
    # the two cards (28,312 and 27,911 tokens/s) despite the H200's 1.43x bandwidth: the
    # replica, compute-bound there, predicts them within 5 %
    pair = {m.gpu: p for m, p, _ in results if m.model == "llama-3.1-8b" and m.input_tokens == "128"
            and m.output_tokens == "128"}  # fmt: skip
    assert pair["h200-sxm"] / pair["h100-sxm"] == pytest.approx(1.0, abs=0.05)


def test_summaries_by_hand():
    s = published.summarize([1.25, 0.8, 1.0, 2.0])
    assert s.gm_error == pytest.approx(math.exp((2 * math.log(1.25) + math.log(2)) / 4))
    assert s.within_125 == 0.75  # 1.25 and 0.8 sit on the band's edges
    assert s.bias == pytest.approx(math.exp(math.log(2) / 4))


def test_a_broken_row_is_named(tmp_path):
    bad = tmp_path / "m.csv"
    lines = CSV.read_text().splitlines()
    bad.write_text("\n".join([lines[0], lines[1].replace(",30000,", ",many,")]) + "\n")
    with pytest.raises(ValueError, match="row 2"):
        published.read_measurements(bad)


def test_the_margin_a_plan_states_is_the_sets_own(results):
    everything = published.by_regime(results)["all"]
    stated = published.DATASHEET_ERROR
    assert stated["rows"] == everything.rows
    assert stated["gm_error"] == pytest.approx(everything.gm_error, abs=5e-4)
    assert stated["within_125"] == pytest.approx(everything.within_125, abs=5e-3)
    assert "x1.12" in published.trust_sentence("datasheet: Llama-3-8B on 1 × H100")

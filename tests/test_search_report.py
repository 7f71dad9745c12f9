"""``interface.search_report``: the search as a reader gets it, from outcomes built by hand.

Three candidates keep the promises at bills of 3, 1 and 2 (the second the cheapest), one does
not fit and one misses the promises: the table must list the three by bill, cut at ``top``,
mark the Pareto front, list the two refused with their reasons, and name the answer; the JSON
must carry every candidate in the grid's order and the Markdown page the same ranking.
"""

import json

from replicaplan.interface import search_report
from replicaplan.planner.search import Candidate, Outcome, SearchResult


def _ok(gpu: str, cost: float, ttft: float, pareto: bool) -> Outcome:
    return Outcome(
        Candidate(gpu, 1, 64, 2048, True),
        "ok",
        mu_star=9.2,
        mu_star_stderr=0.14,
        ttft_p90_s=ttft,
        tpot_p90_s=0.031,
        policy="chase",
        replica_hours=2.5,
        peak_replicas=4,
        minutes_short=0,
        excess_share=0.0,
        price_per_replica_hour=cost / 2.5,
        cost=cost,
        per_million_input=0.1 * cost,
        per_million_output=cost,
        pareto=pareto,
    )


OUTCOMES = [
    _ok("a100", 3.0, 0.2, pareto=True),  # dearer but the fastest first token: on the front
    _ok("h100", 1.0, 0.4, pareto=True),
    _ok("l40s", 2.0, 0.5, pareto=False),  # dearer and slower than the h100: dominated
    Outcome(Candidate("l4", 1, 64, 2048, True), "does not fit", "the weights need 16 GB"),
    Outcome(
        Candidate("l4", 2, 64, 2048, True),
        "misses the promises",
        "the promises (--ttft-slo 1.0, --tpot-slo 0.05, --quota 0.9) are not met",
    ),
]
RESULT = SearchResult(OUTCOMES, OUTCOMES[1], 0.01, "the cheapest within the budget", 8192)


def test_the_table_ranks_by_bill_marks_the_front_and_lists_the_refused():
    lines = search_report.text(RESULT).splitlines()
    assert lines[0].startswith("5 candidates screened, 3 keep the promises (the cheapest 3")
    rows = lines[2:5]  # after the header line and the column heads
    assert [r.split(" x1")[0] for r in rows] == ["h100", "l40s", "a100"]
    assert rows[0].split("  ")[0].endswith(" *") and rows[2].split("  ")[0].endswith(" *")
    assert not rows[1].split("  ")[0].endswith(" *")
    assert "9.20 ± 0.14" in rows[0] and "400 ms" in rows[0] and "31.0 ms" in rows[0]
    assert lines[5] == "2 refused:"
    assert "does not fit: the weights need 16 GB" in lines[6]
    assert "misses the promises: the promises (--ttft-slo 1.0" in lines[7]
    assert (
        lines[-1]
        == "answer: h100 x1, batch 64, budget 2048, chunked (the cheapest within the budget)"
    )


def test_top_cuts_the_table_not_the_refused():
    lines = search_report.text(RESULT, top=1).splitlines()
    assert "(the cheapest 1 below" in lines[0]
    assert lines[2].startswith("h100") and lines[3] == "2 refused:"


def test_with_no_answer_the_table_says_so():
    none = SearchResult(OUTCOMES[3:], None, 0.01, "no candidate keeps the promises")
    text = search_report.text(none)
    assert "0 keep the promises" in text and text.endswith("answer: none")
    assert "No candidate keeps the promises within the budget." in search_report.markdown(none)


def test_the_json_keeps_the_grids_order_and_the_reasons():
    out = json.loads(json.dumps(search_report.summary(RESULT)))
    assert [c["gpu"] for c in out["candidates"]] == ["a100", "h100", "l40s", "l4", "l4"]
    assert out["best"]["gpu"] == "h100" and out["best"]["cost"] == 1.0
    assert out["candidates"][3] == {
        "gpu": "l4",
        "gpus": 1,
        "batch": 64,
        "token_budget": 2048,
        "prefill": "chunked",
        "status": "does not fit",
        "reason": "the weights need 16 GB",
    }
    assert out["short_budget"] == 0.01 and out["candidates"][0]["pareto"] is True


def test_the_markdown_page_has_one_row_per_kept_candidate_the_figure_and_the_refused():
    page = search_report.markdown(RESULT)
    table = [line for line in page.splitlines() if line.startswith("| ") and "x1" in line]
    assert [r.split(" x1")[0] for r in table] == ["| h100", "| l40s", "| a100"]
    assert "![Price against TTFT and TPOT p90 for every candidate](pareto.png)" in page
    assert "## Refused" in page and page.count("\n- ") == 2
    assert "(pareto.png)" not in search_report.markdown(RESULT, figure=None)

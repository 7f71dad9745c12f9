"""The configuration search as a person reads it: a table on the terminal, JSON, and the
Markdown page with its figure that ``replicaplan search --report`` adds to the plan's report.

Layer: interface.
"""

from __future__ import annotations

from replicaplan.planner.search import Outcome, SearchResult


def _row(o: Outcome) -> dict:
    c = o.candidate
    row = {
        "gpu": c.gpu,
        "gpus": c.gpus,
        "batch": c.batch,
        "token_budget": c.token_budget,
        "prefill": "chunked" if c.chunked else "separate",
        "status": o.status,
    }
    if not o.ok:
        return {**row, "reason": o.reason}
    return {
        **row,
        "mu_star_rps": o.mu_star,
        "mu_star_stderr_rps": o.mu_star_stderr,
        "ttft_p90_s": o.ttft_p90_s,
        "tpot_p90_s": o.tpot_p90_s,
        "policy": o.policy,
        "replica_hours": o.replica_hours,
        "peak_replicas": o.peak_replicas,
        "minutes_short": o.minutes_short,
        "requests_beyond_capacity": o.excess_share,
        "price_per_replica_hour": o.price_per_replica_hour,
        "cost": o.cost,
        "cost_per_million_input_tokens": o.per_million_input,
        "cost_per_million_output_tokens": o.per_million_output,
        "pareto": o.pareto,
    }


def summary(result: SearchResult) -> dict:
    """Every candidate as a dict (in the grid's order), the answer and why."""
    return {
        "candidates": [_row(o) for o in result.outcomes],
        "best": None if result.best is None else _row(result.best),
        "why": result.why,
        "short_budget": result.budget,
    }


def _ranked(result: SearchResult) -> list[Outcome]:
    return sorted(
        (o for o in result.outcomes if o.ok),
        key=lambda o: (o.cost, o.ttft_p90_s, o.tpot_p90_s, o.candidate),
    )


HEAD = (
    "configuration",
    "μ* req/s",
    "TTFT p90",
    "TPOT p90",
    "replica-h",
    "short %",
    "in/M",
    "out/M",
)


def _cells(o: Outcome) -> tuple:
    mark = " *" if o.pareto else ""
    return (
        o.candidate.label + mark,
        f"{o.mu_star:.2f} ± {o.mu_star_stderr:.2f}",
        f"{1000 * o.ttft_p90_s:.0f} ms",
        f"{1000 * o.tpot_p90_s:.1f} ms",
        f"{o.replica_hours:,.1f}",
        f"{100 * o.excess_share:.3f}",
        f"{o.per_million_input:.3f}",
        f"{o.per_million_output:.3f}",
    )


def _refused(result: SearchResult) -> list[str]:
    return [f"{o.candidate.label}: {o.status}: {o.reason}" for o in result.outcomes if not o.ok]


def text(result: SearchResult, *, top: int = 10) -> str:
    """The cheapest ``top`` candidates (a * marks the Pareto front), the refused ones with
    their reasons, and the answer."""
    ranked = _ranked(result)
    rows = [HEAD, *(_cells(o) for o in ranked[:top])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
    lines = [
        f"{len(result.outcomes)} candidates screened, {len(ranked)} keep the promises "
        f"(the cheapest {min(top, len(ranked))} below; * = on the Pareto front of price, "
        "TTFT p90 and TPOT p90; prices per million input and output tokens)"
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    refused = _refused(result)
    if refused:
        lines.append(f"{len(refused)} refused:")
        lines += [f"  {r}" for r in refused]
    best = result.best
    lines.append(
        "answer: none" if best is None else f"answer: {best.candidate.label} ({result.why})"
    )
    return "\n".join(lines)


def markdown(result: SearchResult, figure: str | None = "pareto.png") -> str:
    """The search's page of a report: the answer, every candidate that keeps the promises by
    price, the Pareto figure, and the refused with their reasons."""
    ranked = _ranked(result)
    best = result.best
    out = ["# Which configuration", ""]
    out.append(
        "No candidate keeps the promises within the budget."
        if best is None
        else f"The answer: **{best.candidate.label}**, {result.why}. Its full plan is in "
        "report.md (or index.html) beside this page."
    )
    out += ["", "| " + " | ".join(HEAD) + " |", "|" + " --- |" * len(HEAD)]
    out += ["| " + " | ".join(_cells(o)) + " |" for o in ranked]
    if figure:
        out += ["", f"![Price against TTFT and TPOT p90 for every candidate]({figure})"]
    refused = _refused(result)
    if refused:
        out += ["", "## Refused", ""] + [f"- {r}" for r in refused]
    return "\n".join(out) + "\n"

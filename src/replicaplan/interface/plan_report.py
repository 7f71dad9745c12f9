"""A plan (``plan.plan``) for people and programs: JSON, terminal text, a report directory.

``summary`` is the JSON ``replicaplan plan --json`` prints; ``text`` what it prints otherwise;
``write_report`` writes a directory with the report (Markdown or HTML), its figure and the two
manifests, all at once or not at all (built in a temporary directory beside the target, then
renamed).
"""

from __future__ import annotations

import html
import math
from pathlib import Path

from replicaplan.autoscalers.manifest import to_yaml
from replicaplan.interface.files import Staging
from replicaplan.interface.report import Table, clock, zone_label
from replicaplan.planner.plan import Plan, with_sensitivity
from replicaplan.simulation.published import trust_sentence


def summary(p: Plan, **context) -> dict:
    """The plan's numbers as plain JSON-ready values; ``context`` (the log's name…) goes first."""
    op = p.point
    run = p.hpa_run
    return {
        **context,
        "minutes": int(p.rate.size),
        "mean_rate_rps": float(p.rate.mean()),
        "peak_minute_rps": float(p.rate.max()),
        "mean_prompt_tokens": op.mean_prompt,
        "mean_output_tokens": op.mean_output,
        "replica": p.replica_source,
        "mu_star_rps": op.mu_star,
        "mu_star_stderr_rps": op.mu_star_stderr,
        "target_utilization": op.target_utilization,
        "operating_rate_rps": op.rate,
        "residence_s": op.residence_s,
        "concurrency_target": op.concurrency_target,
        "scaling": {
            "signal": p.scaling.signal,
            "target": p.scaling.target,
            "metric": p.hpa["spec"]["metrics"][0]["pods"]["metric"]["name"],
            "why": p.scaling.why,
        },
        "startup_min": p.startup.minutes,
        "price_per_gpu_hour": p.price_per_gpu_hour,
        "gpus_per_replica": p.gpus,
        "price_per_replica_hour": p.price_per_replica_hour,
        "currency": p.currency,
        "min_replicas": p.min_replicas,
        "max_replicas": p.max_replicas,
        "policies": [
            {
                "policy": r.policy.name,
                **r.result.summary(),
                "cost": r.priced.cost,
                "cost_per_million_output_tokens": r.priced.per_million,
            }
            for r in p.rows
        ],
        "recommended": {
            "policy": p.recommended.policy.name,
            "why": p.why,
            "short_budget": p.short_budget,
            "cost_per_million_input_tokens": p.phase_prices[0],
            "cost_per_million_output_tokens_by_phase": p.phase_prices[1],
        },
        "schedule": _schedule_json(p.schedule),
        "schedule_timezone": p.timezone,
        "hpa_replay": {**run.summary(), "cost_per_million_output_tokens": p.hpa_cost_per_million},
        "keda_replay": None
        if p.keda_run is None
        else {
            **p.keda_run.summary(),
            "cost_per_million_output_tokens": p.cost_per_million(p.keda_run),
        },
        "hpa": p.hpa,
        "keda": p.keda,
        "adapter": p.adapter,
    }


def _stderr(p: Plan) -> str:
    err = p.point.mu_star_stderr
    return f" (± {err:.2f})" if err is not None and math.isfinite(err) else ""


POLICY_LEGEND = (
    "replica-hours paid; minutes short of capacity and with a backlog; requests beyond "
    "capacity; use of the ready replicas; price per million output tokens"
)


def policy_table(p: Plan) -> Table:
    """The plan's policies as one table, for the terminal, the Markdown and the HTML report."""
    return Table(
        ("policy", "hours", "short", "queued", "beyond", "use", "per M tokens"),
        tuple(
            (
                r.policy.name,
                f"{r.result.paid_hours:,.1f}",
                f"{r.result.uncovered_minutes}",
                f"{r.result.queued_minutes}",
                f"{100 * r.result.excess_fraction:.3f}%",
                f"{100 * r.result.utilization:.0f}%",
                f"{r.priced.per_million:.3f}",
            )
            for r in p.rows
        ),
    )


WEEKDAY_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
"""Cron's weekdays, in its order (0 = Sunday): the order of a weekly schedule's 168 hours."""


def _schedule_json(table: list[int] | None):
    """24 hourly minimums as a list; a weekly schedule as {weekday: 24 minimums}."""
    if table is None or len(table) == 24:
        return table
    return {name: table[24 * w : 24 * w + 24] for w, name in enumerate(WEEKDAY_NAMES)}


def _hour_runs(day: list[int], zone: str = "UTC") -> list[str]:
    runs = []  # (first hour, last hour, replicas), equal neighbours merged
    for h, n in enumerate(day):
        if runs and runs[-1][2] == n:
            runs[-1] = (runs[-1][0], h, n)
        else:
            runs.append((h, h, n))
    return [
        f"{clock(60 * a)}–{clock(60 * b + 59)} {zone}: at least {n}" for a, b, n in runs if n > 0
    ]


def _schedule_lines(p: Plan) -> list[str]:
    if p.schedule is None:
        return ["no schedule: the log covers fewer than two calendar days"]
    zone = zone_label(p.timezone)
    note = (
        [f"the log spans a summer-time change of {zone}: hours after it were learned an hour off"]
        if p.offset_changes
        else []
    )
    if len(p.schedule) == 24:
        return note + _hour_runs(p.schedule, zone)
    days: dict = {}  # a day's table → the weekdays that share it, Monday first
    for w in (1, 2, 3, 4, 5, 6, 0):
        days.setdefault(tuple(p.schedule[24 * w : 24 * w + 24]), []).append(WEEKDAY_NAMES[w])
    return note + [
        f"{', '.join(names)} {line}"
        for table, names in days.items()
        for line in _hour_runs(table, zone)
    ]


def _price_words(p: Plan) -> str:
    """'2 € per replica-hour (one GPU)' or '12.96 USD per replica-hour (4 GPUs × 3.24)'."""
    gpus = f"{p.gpus} GPUs × {p.price_per_gpu_hour:g}" if p.gpus > 1 else "one GPU"
    return f"{p.price_per_replica_hour:g} {p.currency} per replica-hour ({gpus})".replace("  ", " ")


def _phase_sentence(p: Plan) -> str:
    inp, out = p.phase_prices
    return (
        f"split by the GPU time each takes: {inp:.3f} {p.currency} per million input tokens and "
        f"{out:.3f} per million output tokens"
    )


def text(p: Plan, *, log: str = "") -> str:
    """What ``replicaplan plan`` prints on a terminal."""
    op, run = p.point, p.hpa_run
    lines = [
        f"{log + ': ' if log else ''}{p.rate.size} minutes, mean {p.rate.mean():.2f} req/s, "
        f"busiest minute {p.rate.max():.2f} req/s",
        f"mean prompt {op.mean_prompt:,.0f} tokens, mean answer {op.mean_output:,.0f} tokens",
        f"replica: {p.replica_source}",
        f"  ({trust_sentence(p.replica_source)})",
        f"capacity of one replica on this mix: mu* = {op.mu_star:.2f} req/s{_stderr(p)}",
        f"at rho* = {op.target_utilization:g}: {op.rate:.2f} req/s per replica, "
        f"{op.residence_s:.2f} s in the replica, concurrency target L* = "
        f"{op.concurrency_target:.1f}",
        f"replicas: {p.min_replicas} for the quietest minute, at most {p.max_replicas}"
        + (
            "; KEDA scales to zero and wakes on --wake-query"
            if p.keda["spec"]["minReplicaCount"] == 0
            else ""
        ),
        f"the autoscaler holds {p.scaling.why}",
        "",
        f"the traffic replayed ({p.startup.minutes} min start-up, {_price_words(p)}):",
        policy_table(p).text(indent="  "),
        f"  ({POLICY_LEGEND})",
        f"recommended: {p.recommended.policy.name} ({p.why})",
        f"  its bill {_phase_sentence(p)}",
        f"the HPA below, replayed second by second: {run.paid_hours:.1f} h, "
        f"{run.queued_seconds} s with requests waiting, {run.scale_changes} changes of size, "
        f"{p.hpa_cost_per_million:.3f} per million output tokens",
        *(
            []
            if p.keda_run is None
            else [
                f"the KEDA object, cron minimums included, replayed: "
                f"{p.keda_run.paid_hours:.1f} h, "
                f"{p.keda_run.queued_seconds} s with requests waiting, "
                f"{p.cost_per_million(p.keda_run):.3f} per million output tokens"
            ]
        ),
        "scheduled minimums:",
        *(f"  {line}" for line in _schedule_lines(p)),
        "",
        to_yaml(p.hpa).rstrip(),
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------ the report directory
def _blocks(p: Plan, log: str, sens) -> list[tuple]:
    op, run = p.point, p.hpa_run
    return [
        ("h1", f"Fleet plan for {log or 'the traffic given'}"),
        (
            "p",
            f"{p.rate.size:,} minutes of traffic, mean {p.rate.mean():.2f} req/s, busiest minute "
            f"{p.rate.max():.2f} req/s; mean prompt {op.mean_prompt:,.0f} tokens, mean answer "
            f"{op.mean_output:,.0f} tokens.",
        ),
        ("h2", "One replica"),
        (
            "table",
            Table(
                ("quantity", "value"),
                (
                    ("replica", f"{p.replica_source} ({trust_sentence(p.replica_source)})"),
                    ("capacity within the promises, μ*", f"{op.mu_star:.2f} req/s{_stderr(p)}"),
                    ("target utilization, ρ*", f"{op.target_utilization:g}"),
                    ("rate given to each replica, ρ*μ*", f"{op.rate:.2f} req/s"),
                    ("mean time in the replica there, W̄", f"{op.residence_s:.2f} s"),
                    ("concurrency target, L* = ρ*μ*W̄", f"{op.concurrency_target:.1f}"),
                    ("replicas (quietest minute … max)", f"{p.min_replicas} … {p.max_replicas}"),
                ),
            ),
        ),
        ("h2", "The policies over this traffic"),
        (
            "p",
            f"Start-up {p.startup.minutes} min, price {_price_words(p)}. "
            f"Recommended: **{p.recommended.policy.name}**, {p.why}; its bill "
            f"{_phase_sentence(p)}.",
        ),
        ("table", policy_table(p)),
        ("p", f"Columns: {POLICY_LEGEND}."),
        ("img", "fleet.png", "Arrivals and each policy's ready capacity, minute by minute."),
        ("p", _startup_sentence(sens)),
        (
            "img",
            "startup.png",
            "Each policy's price against the start-up time; hollow markers leave minutes short.",
        ),
        ("h2", "The autoscaler"),
        (
            "p",
            "hpa.yaml (autoscaling/v2), keda.yaml (KEDA ScaledObject) and adapter.yaml (the "
            "prometheus-adapter rule that serves the HPA its metric) hold the target, "
            f"{p.scaling.why}, the replica bounds and the behavior derived from the start-up "
            "time and the traffic's steps. Replayed second by second on this traffic the HPA "
            f"paid {run.paid_hours:.1f} "
            f"replica-hours, had requests waiting in {run.queued_seconds} s, changed size "
            f"{run.scale_changes} times and cost {p.hpa_cost_per_million:.3f} per million output "
            "tokens.",
        ),
        *(
            []
            if p.keda_run is None
            else [
                (
                    "p",
                    "The KEDA object, its cron minimums included, replayed the same way: "
                    f"{p.keda_run.paid_hours:.1f} replica-hours, requests waiting in "
                    f"{p.keda_run.queued_seconds} s, {p.cost_per_million(p.keda_run):.3f} per "
                    "million output tokens.",
                )
            ]
        ),
        ("h2", "Scheduled minimums"),
        ("list", _schedule_lines(p)),
    ]


def report_sensitivity(p: Plan):
    """The plan's policies at each start-up of ``plan.SENSITIVITY_STARTUPS`` and at its own, as
    the plan computed them (``plan.with_sensitivity``): a report reads results, it runs none."""
    if p.sensitivity is None:
        raise ValueError(
            "the plan has no start-up sensitivity: make it with plan(..., sensitivity=True) or "
            "pass it through plan.with_sensitivity"
        )
    return p.sensitivity


def _startup_sentence(sens) -> str:
    first = sens.first_short("chase")
    if first is None:
        return (
            f"With any start-up up to {sens.startups[-1]} min, chasing the traffic leaves no "
            "minute short."
        )
    return (
        f"Chasing the traffic leaves minutes short from a start-up of {first} min on; below "
        "that, chasing alone covers every minute."
    )


def _markdown(blocks) -> str:
    out = []
    for kind, *rest in blocks:
        if kind in ("h1", "h2"):
            out.append(("#" if kind == "h1" else "##") + " " + rest[0])
        elif kind == "p":
            out.append(rest[0])
        elif kind == "list":
            out.append("\n".join(f"- {x}" for x in rest[0]))
        elif kind == "img":
            out.append(f"![{rest[1]}]({rest[0]})")
        elif kind == "table":
            out.append(rest[0].markdown())
    return "\n\n".join(out) + "\n"


def _html(blocks) -> str:
    def inline(s: str) -> str:
        parts = html.escape(s).split("**")
        return "".join(f"<strong>{x}</strong>" if i % 2 else x for i, x in enumerate(parts))

    body = []
    for kind, *rest in blocks:
        if kind in ("h1", "h2"):
            body.append(f"<{kind}>{inline(rest[0])}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{inline(rest[0])}</p>")
        elif kind == "list":
            body.append("<ul>" + "".join(f"<li>{inline(x)}</li>" for x in rest[0]) + "</ul>")
        elif kind == "img":
            src, alt = html.escape(rest[0]), html.escape(rest[1])
            body.append(f'<figure><img src="{src}" alt="{alt}"><figcaption>{alt}</figcaption>')
            body[-1] += "</figure>"
        elif kind == "table":
            body.append(rest[0].html(inline))
    style = (
        "body{font-family:sans-serif;max-width:60rem;margin:auto;padding:1rem}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}"
        "img{max-width:100%}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Fleet plan</title><style>{style}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def check_report_dir(directory) -> Path:
    """``directory`` as a Path if a report may be written there: absent or empty, in a folder
    that exists; else an error saying which."""
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ValueError(f"report directory {target} exists and is not empty")
    if not target.resolve().parent.is_dir():
        raise ValueError(f"report directory's parent does not exist: {target.parent}")
    return target


def write_report(p: Plan, directory, *, fmt: str = "md", log: str = "") -> Path:
    """Write ``directory`` with report.md (``fmt`` "md") or index.html ("html"), fleet.png,
    hpa.yaml, keda.yaml and adapter.yaml (the prometheus-adapter rule). The directory must not
    exist or be empty; it appears whole or not at all."""
    target = check_report_dir(directory)
    p = with_sensitivity(p)  # computed by the planner, not by the report
    with Staging() as out:
        fill_report(p, out.directory(target), fmt=fmt, log=log)
    return target


def fill_report(p: Plan, folder: Path, *, fmt: str = "md", log: str = "") -> None:
    """Write the report's files into ``folder`` (empty, and usually staged: see
    ``write_report`` and the command's one ``Staging`` of all its outputs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from replicaplan.interface.plots import plot_plan, plot_plan_sensitivity

    if fmt not in ("md", "html"):
        raise ValueError(f"fmt must be 'md' or 'html', got {fmt!r}")
    fig = plot_plan(p.rows, p.hpa_run, start_s=p.start_s, zone=p.timezone)
    fig.savefig(folder / "fleet.png", dpi=120)
    plt.close(fig)
    sens = report_sensitivity(p)
    fig = plot_plan_sensitivity(sens.startups, sens.per_million, sens.uncovered)
    fig.savefig(folder / "startup.png", dpi=120)
    plt.close(fig)
    (folder / "hpa.yaml").write_text(to_yaml(p.hpa), encoding="utf-8")
    (folder / "keda.yaml").write_text(to_yaml(p.keda), encoding="utf-8")
    (folder / "adapter.yaml").write_text(to_yaml(p.adapter), encoding="utf-8")
    blocks = _blocks(p, log, sens)
    if fmt == "md":
        (folder / "report.md").write_text(_markdown(blocks), encoding="utf-8")
    else:
        (folder / "index.html").write_text(_html(blocks), encoding="utf-8")

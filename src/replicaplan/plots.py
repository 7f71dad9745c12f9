"""Figure functions: the notebooks call these, so a figure is drawn the same way everywhere."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .day import DayResult
from .report import clock


def _hour_ticks(ax, start: int, stop: int, step: int) -> None:
    ticks = np.arange(start, stop + 1, step)
    ax.set_xticks(ticks)
    ax.set_xticklabels([clock(int(m) % 1440) for m in ticks])


def plot_day(results: dict[str, DayResult], *, zoom=(20 * 60 + 30, 21 * 60 + 30)):
    """Arrivals against ready capacity over the whole day (left) and around an event (right).

    ``results`` maps a label to a policy's ``DayResult``; all must share the same traffic.
    Minutes in which the ready capacity falls short of the arrivals are shaded.
    """
    first = next(iter(results.values()))
    minutes = np.arange(first.rate.size)
    fig, (whole, near) = plt.subplots(1, 2, figsize=(11, 4.6), gridspec_kw={"width_ratios": [3, 2]})
    styles = ["-", "--", ":", "-."]
    for ax, (lo, hi) in ((whole, (0, minutes.size - 1)), (near, zoom)):
        sel = slice(lo, hi + 1)
        ax.step(
            minutes[sel],
            first.rate[sel],
            where="post",
            color="black",
            lw=1.6,
            label="arrivals λ(t)",
        )
        for (label, r), ls in zip(results.items(), styles, strict=False):
            (line,) = ax.step(
                minutes[sel],
                r.ready_capacity[sel],
                where="post",
                ls=ls,
                lw=1.3,
                label=f"ready capacity, {label}",
            )
            m = minutes[sel]
            short = r.rate[sel] > r.ready_capacity[sel]
            ax.bar(
                m[short],
                (r.rate[sel] - r.ready_capacity[sel])[short],
                width=1,
                align="edge",
                bottom=r.ready_capacity[sel][short],
                color=line.get_color(),
                alpha=0.35,
            )
        ax.set_xlim(lo, hi)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("requests/s")
        ax.grid(alpha=0.3)
    _hour_ticks(whole, 0, minutes.size, 240)
    _hour_ticks(near, zoom[0], zoom[1], 15)
    whole.set_title("the whole day")
    near.set_title(f"{clock(zoom[0])}–{clock(zoom[1])}")
    handles, labels = whole.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def plot_conformance(
    curves: dict,
    *,
    quota: float | None = None,
    exact=None,
    mu_stars: dict | None = None,
    xlabel: str = "arrival rate λ (req/s)",
    title: str | None = None,
):
    """Conformance against arrival rate for several runs.

    ``curves`` maps a label to (rates, conformance) or (rates, conformance, stderr); error bars
    are drawn at ±2 standard errors. ``exact`` is an optional (rates, values, label) closed form;
    ``mu_stars`` maps a label to a rate marked with a vertical line; ``quota`` draws the quota.
    """
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if exact is not None:
        xs, ys, label = exact
        ax.plot(xs, ys, color="black", lw=1.5, label=label)
    markers = ["o", "s", "^", "D"]
    for (label, data), marker in zip(curves.items(), markers, strict=False):
        rates, conf = np.asarray(data[0]), np.asarray(data[1])
        err = 2 * np.asarray(data[2]) if len(data) > 2 else None
        ax.errorbar(rates, conf, yerr=err, marker=marker, ms=4, lw=1, capsize=2, label=label)
    if quota is not None:
        ax.axhline(quota, color="grey", ls=":", lw=1)
        ax.annotate(
            f"quota {quota:g}",
            (ax.get_xlim()[0], quota),
            xytext=(4, -12),
            textcoords="offset points",
            color="grey",
            fontsize=8,
        )
    for label, rate in (mu_stars or {}).items():
        ax.axvline(rate, color="grey", ls="--", lw=0.8)
        ax.annotate(
            label,
            (rate, 0.05),
            xytext=(3, 0),
            textcoords="offset points",
            rotation=90,
            fontsize=8,
            color="grey",
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel("conformance (share meeting the SLOs)")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def plot_latency_cdf(
    samples: dict,
    *,
    threshold: float | None = None,
    xlabel: str = "seconds",
    title: str | None = None,
):
    """Empirical CDFs of latency samples on a log axis, with an optional SLO threshold."""
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for label, values in samples.items():
        x = np.sort(np.asarray(values))
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=label)
    if threshold is not None:
        ax.axvline(threshold, color="grey", ls="--", lw=1)
        ax.annotate(
            "SLO",
            (threshold, 0.02),
            xytext=(3, 0),
            textcoords="offset points",
            fontsize=8,
            color="grey",
        )
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of requests ≤ x")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def plot_fleet(
    runs: dict,
    *,
    start_s: int = 0,
    stop_s: int | None = None,
    tick_s: int = 3600,
    clock_offset_s: int = 0,
):
    """Closed-loop runs over time: paid replicas (top) and requests waiting for a slot (bottom).

    ``runs`` maps a label to a ``control.FleetRun``; the x axis is the clock (HH:MM), second 0 of
    the runs being ``clock_offset_s`` seconds after midnight.
    """
    first = next(iter(runs.values()))
    stop_s = first.rate.size if stop_s is None else stop_s
    t = np.arange(start_s, stop_s)
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(10, 6), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    for label, run in runs.items():
        top.step(t, run.paid[start_s:stop_s], where="post", lw=1.2, label=label)
        bottom.plot(t, run.waiting[start_s:stop_s], lw=1.2, label=label)
    need = first.rate[start_s:stop_s] / first.capacity_rps
    top.plot(t, need, color="black", lw=1, ls=":", label="λ(t)/μ (replicas at full load)")
    top.set_ylabel("replicas paid")
    top.set_yscale("log")
    top.grid(alpha=0.3, which="both")
    top.legend(fontsize=8, loc="upper left")
    bottom.set_ylabel("requests waiting")
    bottom.grid(alpha=0.3)
    ticks = np.arange(start_s - start_s % tick_s, stop_s + 1, tick_s)
    ticks = ticks[(ticks >= start_s) & (ticks <= stop_s)]
    bottom.set_xticks(ticks)
    bottom.set_xticklabels([clock(int((s + clock_offset_s) // 60) % 1440) for s in ticks])
    bottom.set_xlim(start_s, stop_s)
    fig.tight_layout()
    return fig


def plot_saturation(concurrency, curves: dict, *, batch: int):
    """Metrics of one replica against the requests in flight on it (per-replica concurrency)."""
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, values in curves.items():
        ax.plot(concurrency, values, lw=1.6, label=label)
    ax.axvline(batch, color="grey", ls="--", lw=1)
    ax.annotate(
        f"batch full ({batch})",
        (batch, 0.05),
        xytext=(3, 0),
        textcoords="offset points",
        fontsize=8,
        color="grey",
    )
    ax.set_xlabel("requests in flight on the replica")
    ax.set_ylabel("metric (share of its maximum)")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def plot_cost_curve(utilization, per_million, marks: dict):
    """Cost per million tokens against utilization (the 1/ρ̄ curve), with named points marked."""
    fig, ax = plt.subplots(figsize=(8, 4.2))
    ax.plot(utilization, per_million, color="black", lw=1.5, label="C / (3600 ν* ρ̄)")
    for (label, (u, c)), marker in zip(marks.items(), ["o", "s", "^", "D", "v", "P"], strict=False):
        ax.plot([u], [c], marker=marker, ls="none", ms=7, label=f"{label} ({c:.2f})")
    ax.set_xlabel("mean utilization ρ̄")
    ax.set_ylabel("cost per million tokens")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, min(float(np.max(per_million)), 4 * min(c for _, c in marks.values())))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_spot_map(discounts, lost, factor, cases: dict):
    """The spot cost factor (1 − d)/(1 − ω) over discount and lost work, break-even line d = ω."""
    fig, ax = plt.subplots(figsize=(7, 5))
    levels = [0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0]
    cs = ax.contour(discounts, lost, factor, levels=levels, colors="grey", linewidths=0.8)
    ax.clabel(cs, fmt="%.2f", fontsize=8)
    ax.contourf(discounts, lost, factor < 1, levels=[0.5, 1.5], colors=["#d8ecd8"])
    ax.plot([0, 1], [0, 1], color="black", lw=1.5, label="break-even d = ω")
    for label, (dd, ww) in cases.items():
        ax.plot([dd], [ww], "o", ms=7, label=label)
    ax.set_xlabel("discount d")
    ax.set_ylabel("share of work lost ω")
    ax.set_xlim(0, 0.95)
    ax.set_ylim(0, 0.95)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title("spot cost relative to on-demand (green: cheaper)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_roofline(peak_flops: float, peak_bandwidth: float, points: dict):
    """The roofline min(P, I·B) on log axes, with named (intensity, FLOP/s) points."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    intensity = np.logspace(-0.5, 4, 200)
    ax.loglog(
        intensity,
        np.minimum(peak_flops, intensity * peak_bandwidth),
        color="black",
        lw=1.6,
        label="roofline min(P, I·B)",
    )
    ax.axvline(peak_flops / peak_bandwidth, color="grey", ls=":", lw=1)
    ax.annotate(
        "ridge",
        (peak_flops / peak_bandwidth, peak_flops / 30),
        xytext=(4, 0),
        textcoords="offset points",
        fontsize=8,
        color="grey",
    )
    for label, (xs, ys) in points.items():
        ax.loglog(xs, ys, marker="o", ms=4, lw=1, label=label)
    ax.set_xlabel("arithmetic intensity (FLOP per byte)")
    ax.set_ylabel("FLOP/s")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def plot_step_times(batches, curves: dict, *, floor_s: float, calibration=None, budget_ms=None):
    """Decode step time against the batch, one curve per context length (ms).

    ``curves`` maps a label to step times in seconds at ``batches``; ``floor_s`` is the time of a
    step that reads the weights alone; ``calibration`` an optional (batch, seconds) point.
    """
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for (label, seconds), style in zip(curves.items(), ["-", "--", "-.", ":"], strict=False):
        ax.plot(batches, np.asarray(seconds) * 1e3, ls=style, lw=1.6, label=label)
    ax.axhline(floor_s * 1e3, color="grey", lw=1, ls=":", label="the weights alone")
    if calibration is not None:
        b, s = calibration
        ax.plot([b], [s * 1e3], "ko", ms=6, label=f"the running example ({s * 1e3:.0f} ms at {b})")
    if budget_ms is not None:
        ax.axhline(budget_ms, color="tab:red", lw=1, label=f"TPOT promise ({budget_ms:.0f} ms)")
    ax.set_xlabel("sequences in the decode step, b")
    ax.set_ylabel("duration of one decode step (ms)")
    ax.set_ylim(0, None)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def plot_forecast_study(study):
    """Uncovered minutes and paid hours of chasing and of scaling ahead on a forecast, against
    the forecast's error (a ``day.ForecastStudy``)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.8))
    err = np.asarray(study.error) * 100
    left.plot(err, study.uncovered_chase, "o-", label="chasing")
    left.plot(err, study.uncovered_forecast, "s--", label="scaling ahead on the forecast")
    left.set_ylabel("uncovered minutes")
    right.plot(err, study.hours_chase, "o-", label="chasing")
    right.plot(err, study.hours_forecast, "s--", label="scaling ahead on the forecast")
    right.set_ylabel("replica-hours paid")
    for ax in (left, right):
        ax.set_xlabel("forecast error (RMS, % of the mean rate)")
        ax.grid(alpha=0.3)
    left.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def plot_plan(rows, hpa_run=None, *, start_s: float = 0.0):
    """A plan's policies over the log's traffic: arrivals and each policy's ready capacity
    (req/s, per minute), with the HPA's replay averaged per minute when given.

    ``rows`` are ``plan.ReplayRow``; the x axis is hours from the log's first minute, labelled
    with the clock (UTC) when ``start_s`` places the log on it.
    """
    first = rows[0].result
    hours = np.arange(first.rate.size) / 60
    fig, ax = plt.subplots(figsize=(11, 4.2))
    ax.step(hours, first.rate, where="post", color="black", lw=1.2, label="arrivals λ(t)")
    styles = ["-", "--", ":", "-.", (0, (5, 1))]
    for row, ls in zip(rows, styles, strict=False):
        capacity = row.result.ready_capacity
        ax.step(hours, capacity, where="post", ls=ls, lw=1.2, label=row.policy.name)
    if hpa_run is not None:
        per_min = hpa_run.ready[: first.rate.size * 60].reshape(-1, 60).mean(axis=1)
        ax.plot(hours, per_min * first.capacity, lw=1, alpha=0.8, label="the HPA written, replayed")
    ax.set_ylabel("requests/s")
    offset_h = (start_s % 86400) / 3600
    span = max(float(hours[-1]), 1.0)
    if span > 48:  # days: a tick at each midnight (UTC), named by its day
        ticks = np.arange((24 - offset_h) % 24, span + 1e-9, 24)
        labels = [f"day {int((t + offset_h) // 24) + 1}" for t in ticks]
        ax.set_xlabel("day of the log (ticks at 00:00 UTC)")
    else:
        step = 1 if span <= 12 else 6
        ticks = np.arange(0, span + 1e-9, step)
        labels = [clock(int(round((t + offset_h) * 60)) % 1440) for t in ticks]
        ax.set_xlabel("clock (UTC)" if start_s else "time from the first request (HH:MM)")
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.tight_layout()
    return fig


def plot_plan_sensitivity(
    startups, per_million: dict, uncovered: dict, promises=None, mu_stars=None, cost=None
):
    """How a plan moves: each policy's price per million output tokens against the start-up
    time (left; a hollow marker where the policy leaves minutes uncovered), and, when
    ``promises`` are given, μ* with the recommended policy's price against the TPOT promise
    (right)."""
    if promises is None:
        fig, left = plt.subplots(figsize=(6.5, 4.2))
    else:
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    markers = ["o", "s", "^", "D"]
    for (name, y), mk in zip(per_million.items(), markers, strict=False):
        short = np.asarray(uncovered[name]) > 0
        (line,) = left.plot(startups, y, "-", lw=1.2, label=name)
        left.plot(np.asarray(startups)[~short], np.asarray(y)[~short], mk, color=line.get_color())
        left.plot(
            np.asarray(startups)[short],
            np.asarray(y)[short],
            mk,
            mfc="white",
            color=line.get_color(),
        )
    left.set_xlabel("start-up time (min)")
    left.set_ylabel("price per million output tokens")
    left.set_ylim(bottom=0)
    left.grid(alpha=0.3)
    left.legend(fontsize=7, loc="lower right")
    if promises is None:
        fig.tight_layout()
        return fig
    ms = np.asarray(promises) * 1000
    right.plot(ms, mu_stars, "o-", color="black", label="μ* (left axis)")
    right.set_xlabel("TPOT promise (ms)")
    right.set_ylabel("μ* (req/s)")
    right.grid(alpha=0.3)
    twin = right.twinx()
    twin.plot(ms, cost, "s--", color="tab:red", label="recommended policy's price (right axis)")
    twin.set_ylabel("price per million output tokens")
    handles = right.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    right.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="center right")
    fig.tight_layout()
    return fig

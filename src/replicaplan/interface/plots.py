"""Figure functions: the notebooks call these, so a figure is drawn the same way everywhere.

Each is drawn under the book's one style, and sent to a notebook with its phone rendering, by
``figures.styled``; every axis names its quantity and its unit, and panels are labelled (a),
(b) in their titles so that a caption names them the same way on a desktop and on a phone.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator

from replicaplan.interface.figures import ANNOTATION, MIN_FONT_PT, WIDTH_IN, styled
from replicaplan.interface.report import clock, zone_label
from replicaplan.simulation.day import DayResult


def _plain_log(ax, axis: str = "y") -> None:
    """A log axis labelled with plain numbers: at 1, 2 and 5 of each decade over a short range,
    at the powers of ten alone over more than three decades (so the labels never collide)."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    lo, hi = ax.get_ylim() if axis == "y" else ax.get_xlim()
    decades = np.log10(max(hi, 1e-300) / max(lo, 1e-300))
    subs = (1.0,) if decades > 3 else (1.0, 2.0, 5.0)
    target.set_major_locator(LogLocator(base=10, subs=subs))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    target.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def _hour_ticks(ax, start: int, stop: int, step: int) -> None:
    ticks = np.arange(start, stop + 1, step)
    ax.set_xticks(ticks)
    ax.set_xticklabels([clock(int(m) % 1440) for m in ticks])


def _legend_below(fig, axes, ncol: int = 2) -> None:
    """One legend for the figure, under the axes, clear of the data."""
    handles, labels = axes.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False)


@styled
def plot_day(results: dict[str, DayResult], *, zoom=(20 * 60 + 30, 21 * 60 + 30)):
    """Arrivals against ready capacity over the whole day (a) and around an event (b).

    ``results`` maps a label to a policy's ``DayResult``; all must share the same traffic.
    Minutes in which the ready capacity falls short of the arrivals are shaded.
    """
    first = next(iter(results.values()))
    minutes = np.arange(first.rate.size)
    fig, (whole, near) = plt.subplots(2, 1, figsize=(WIDTH_IN, 7.2))
    styles = ["-", "--", ":", "-."]
    for ax, (lo, hi) in ((whole, (0, minutes.size - 1)), (near, zoom)):
        sel = slice(lo, hi + 1)
        ax.step(minutes[sel], first.rate[sel], where="post", color="black", label="arrivals λ(t)")
        for (label, r), ls in zip(results.items(), styles, strict=False):
            (line,) = ax.step(
                minutes[sel],
                r.ready_capacity[sel],
                where="post",
                ls=ls,
                lw=1.4,
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
        ax.set_xlabel("time of day (HH:MM)")
    _hour_ticks(whole, 0, minutes.size, 180)
    _hour_ticks(near, zoom[0], zoom[1], 15)
    whole.set_title("(a) the whole day")
    near.set_title(f"(b) {clock(zoom[0])}–{clock(zoom[1])}, shaded: minutes short of capacity")
    _legend_below(fig, whole, ncol=1)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


@styled
def plot_conformance(
    curves: dict,
    *,
    quota: float | None = None,
    exact=None,
    mu_stars: dict | None = None,
    xlabel: str = "arrival rate λ (req/s)",
    title: str | None = None,
    xlim: tuple[float, float] | None = None,
):
    """Conformance against arrival rate for several runs.

    ``curves`` maps a label to (rates, conformance) or (rates, conformance, stderr); error bars
    are drawn at ±2 standard errors. ``exact`` is an optional (rates, values, label) closed form;
    ``mu_stars`` maps a label to a rate marked with a vertical line; ``quota`` draws the quota.
    ``xlim`` narrows the rates shown to where the curves change (a flat run at 1 says nothing).
    The legend sits under the axes, where no data can be.
    """
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.6))
    if xlim is not None:
        ax.set_xlim(*xlim)
        ax.set_autoscalex_on(False)
    if exact is not None:
        xs, ys, label = exact
        ax.plot(xs, ys, color="black", label=label)
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
            xytext=(4, -14),
            textcoords="offset points",
            **ANNOTATION,
        )
    for label, rate in (mu_stars or {}).items():
        ax.axvline(rate, color="grey", ls="--", lw=0.8)
        ax.annotate(
            label,
            (rate, 0.05),
            xytext=(3, 0),
            textcoords="offset points",
            rotation=90,
            **ANNOTATION,
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel("conformance (share meeting the SLOs)")
    ax.set_ylim(-0.02, 1.02)
    if title:
        ax.set_title(title)
    _legend_below(fig, ax, ncol=1)
    n = len(ax.get_legend_handles_labels()[1])
    fig.tight_layout(rect=(0, 0.045 * n + 0.02, 1, 1))
    return fig


@styled
def plot_latency_cdf(
    samples: dict,
    *,
    threshold: float | None = None,
    xlabel: str = "seconds",
    title: str | None = None,
):
    """Empirical CDFs of latency samples on a log axis, with an optional SLO threshold."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.6))
    for label, values in samples.items():
        x = np.sort(np.asarray(values))
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=label)
    if threshold is not None:
        ax.axvline(threshold, color="grey", ls="--", lw=1)
        ax.annotate(
            f"SLO ({threshold:g} s)",
            (threshold, 0.5),
            xytext=(4, 0),
            textcoords="offset points",
            **ANNOTATION,
        )
    ax.set_xscale("log")
    _plain_log(ax, "x")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of requests ≤ x")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


@styled
def plot_fleet(
    runs: dict,
    *,
    start_s: int = 0,
    stop_s: int | None = None,
    tick_s: int = 3600,
    clock_offset_s: int = 0,
):
    """Closed-loop runs over time: paid replicas (a, log axis) and requests waiting for a slot
    (b).

    ``runs`` maps a label to a ``control.FleetRun``; the x axis is the clock (HH:MM), second 0 of
    the runs being ``clock_offset_s`` seconds after midnight.
    """
    first = next(iter(runs.values()))
    stop_s = first.rate.size if stop_s is None else stop_s
    t = np.arange(start_s, stop_s)
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(WIDTH_IN, 6.8), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    for label, run in runs.items():
        top.step(t, run.paid[start_s:stop_s], where="post", lw=1.2, label=label)
        bottom.plot(t, run.waiting[start_s:stop_s], lw=1.2, label=label)
    need = first.rate[start_s:stop_s] / first.max_rate_rps
    top.plot(t, need, color="black", lw=1, ls=":", label="λ(t)/μ (replicas at full load)")
    top.set_ylabel("replicas paid")
    top.set_title("(a) replicas paid", loc="left")
    top.set_yscale("log")
    _plain_log(top, "y")
    # the axis ends at the decade above the highest fleet, so its top carries a label
    highest = max(float(np.max(run.paid[start_s:stop_s])) for run in runs.values())
    top.set_ylim(top=10 ** np.ceil(np.log10(max(highest, 1.0) * 1.05)))
    top.grid(alpha=0.3, which="both")
    bottom.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    bottom.set_ylabel("requests waiting")
    bottom.set_title("(b) requests waiting for a batch slot", loc="left")
    bottom.set_xlabel("time of day (HH:MM)")
    ticks = np.arange(start_s - start_s % tick_s, stop_s + 1, tick_s)
    ticks = ticks[(ticks >= start_s) & (ticks <= stop_s)]
    bottom.set_xticks(ticks)
    bottom.set_xticklabels([clock(int((s + clock_offset_s) // 60) % 1440) for s in ticks])
    bottom.set_xlim(start_s, stop_s)
    _legend_below(fig, top, ncol=1)
    n = len(top.get_legend_handles_labels()[1])
    fig.tight_layout(rect=(0, 0.04 * n + 0.02, 1, 1))
    return fig


@styled
def plot_saturation(concurrency, curves: dict, *, batch: int):
    """Metrics of one replica against the requests in flight on it (per-replica concurrency)."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.2))
    for label, values in curves.items():
        ax.plot(concurrency, values, label=label)
    ax.axvline(batch, color="grey", ls="--", lw=1)
    ax.annotate(
        f"batch full ({batch})",
        (batch, 0.05),
        xytext=(-4, 0),
        textcoords="offset points",
        ha="right",
        **ANNOTATION,
    )
    ax.set_xlabel("requests in flight on the replica")
    ax.set_ylabel("metric (share of its maximum)")
    ax.set_ylim(0, 1.05)
    _legend_below(fig, ax, ncol=1)
    n = len(ax.get_legend_handles_labels()[1])
    fig.tight_layout(rect=(0, 0.05 * n + 0.02, 1, 1))
    return fig


@styled
def plot_cost_curve(utilization, per_million, marks: dict, *, currency: str = "€"):
    """Cost per million tokens against utilization (the 1/ρ̄ curve), with named points marked.

    The points are labelled beside the curve, in the order of their utilization, with a thin
    line to their marker, so points that nearly coincide stay readable.
    """
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.0))
    ax.plot(utilization, per_million, color="black", label="C / (3600 ν* ρ̄)")
    top = 2.2 * max(c for _, c in marks.values())
    ordered = sorted(marks.items(), key=lambda kv: kv[1][0])
    markers = ["o", "s", "^", "D", "v", "P"]
    for i, ((label, (u, c)), marker) in enumerate(zip(ordered, markers, strict=False)):
        (point,) = ax.plot([u], [c], marker=marker, ls="none", ms=7)
        ax.annotate(
            f"{label}: {c:.2f} {currency}",
            (u, c),
            xytext=(0.52, top * (0.93 - 0.085 * i)),
            textcoords="data",
            fontsize=MIN_FONT_PT,
            color=point.get_color(),
            va="center",
            arrowprops={
                "arrowstyle": "-",
                "color": point.get_color(),
                "lw": 0.7,
                "relpos": (0, 0.5),
                "shrinkB": 4,
            },
        )
    ax.set_xlabel("mean utilization of the paid capacity, ρ̄")
    ax.set_ylabel(f"cost per million tokens ({currency})")
    inside = np.asarray(utilization)[np.asarray(per_million) <= top]
    ax.set_xlim(float(np.floor(inside.min() * 20) / 20), 1.02)  # the curve enters at the top
    ax.set_ylim(0, top)
    fig.tight_layout()
    return fig


@styled
def plot_spot_map(discounts, lost, factor, cases: dict):
    """The spot cost factor (1 − d)/(1 − ω) over discount and lost work, break-even line d = ω."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 6.0))
    # no 1.00 contour: it is the break-even diagonal, drawn and named below, and its label
    # would sit struck through by that line
    levels = [0.2, 0.4, 0.6, 0.8, 1.25, 1.5, 2.0]
    cs = ax.contour(discounts, lost, factor, levels=levels, colors="grey", linewidths=0.8)
    ax.clabel(cs, fmt="%.2f", fontsize=MIN_FONT_PT)
    ax.contourf(discounts, lost, factor < 1, levels=[0.5, 1.5], colors=["#d8ecd8"])
    ax.plot([0, 1], [0, 1], color="black", label="break-even d = ω")
    for label, (dd, ww) in cases.items():
        ax.plot([dd], [ww], "o", ms=7, label=label)
    ax.set_xlabel("discount d (share of the on-demand price)")
    ax.set_ylabel("share of work lost ω")
    ax.set_xlim(0, 0.95)
    ax.set_ylim(0, 0.95)
    ax.grid(False)
    ax.legend(loc="upper left")
    ax.set_title("spot cost relative to on-demand (green: cheaper)")
    fig.tight_layout()
    return fig


@styled
def plot_roofline(peak_flops: float, peak_bandwidth: float, points: dict):
    """The roofline min(P, I·B) on log axes, with named (intensity, FLOP/s) points."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 6.2))
    intensity = np.logspace(-0.5, 4, 200)
    ax.loglog(
        intensity,
        np.minimum(peak_flops, intensity * peak_bandwidth),
        color="black",
        label="roofline min(P, I·B)",
    )
    ax.axvline(peak_flops / peak_bandwidth, color="grey", ls=":", lw=1)
    ax.annotate(
        "ridge",
        (peak_flops / peak_bandwidth, peak_flops / 30),
        xytext=(4, 0),
        textcoords="offset points",
        **ANNOTATION,
    )
    for label, (xs, ys) in points.items():
        ax.loglog(xs, ys, marker="o", ms=4, lw=1, label=label)
    ax.set_xlabel("arithmetic intensity (FLOP per byte)")
    ax.set_ylabel("FLOP/s")
    ax.grid(alpha=0.3, which="both")
    _legend_below(fig, ax, ncol=1)
    n = len(ax.get_legend_handles_labels()[1])
    fig.tight_layout(rect=(0, 0.045 * n + 0.02, 1, 1))
    return fig


@styled
def plot_step_times(batches, curves: dict, *, floor_s: float, calibration=None, budget_ms=None):
    """Decode step time against the batch, one curve per context length (ms).

    ``curves`` maps a label to step times in seconds at ``batches``; ``floor_s`` is the time of a
    step that reads the weights alone; ``calibration`` an optional (batch, seconds) point.
    """
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.4))
    for (label, seconds), style in zip(curves.items(), ["-", "--", "-.", ":"], strict=False):
        ax.plot(batches, np.asarray(seconds) * 1e3, ls=style, label=label)
    ax.axhline(floor_s * 1e3, color="grey", lw=1, ls=":", label="the weights alone")
    if calibration is not None:
        b, s = calibration
        ax.plot([b], [s * 1e3], "ko", ms=6, label=f"the running example ({s * 1e3:.0f} ms at {b})")
    if budget_ms is not None:
        ax.axhline(budget_ms, color="tab:red", lw=1, label=f"TPOT promise ({budget_ms:.0f} ms)")
    ax.set_xlabel("sequences in the decode step, b")
    ax.set_ylabel("duration of one decode step (ms)")
    ax.set_ylim(0, None)
    _legend_below(fig, ax, ncol=2)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    return fig


@styled
def plot_forecast_study(study):
    """Uncovered minutes and paid hours of chasing and of scaling ahead on a forecast, against
    the forecast's error (a ``studies.ForecastStudy``)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH_IN, 4.2))
    err = np.asarray(study.error) * 100
    left.plot(err, study.uncovered_chase, "o-", label="chasing")
    left.plot(err, study.uncovered_forecast, "s--", label="scaling ahead on the forecast")
    left.set_ylabel("uncovered minutes")
    left.set_title("(a) minutes short of capacity", loc="left")
    right.set_title("(b) replica-hours paid", loc="left")
    right.plot(err, study.hours_chase, "o-", label="chasing")
    right.plot(err, study.hours_forecast, "s--", label="scaling ahead on the forecast")
    right.set_ylabel("replica-hours paid")
    for ax in (left, right):
        ax.set_xlabel("forecast error (% of mean rate)")
    _legend_below(fig, left, ncol=2)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def _plan_ticks(ax, hours, start_s: float, zone: str = "UTC") -> None:
    zone = zone_label(zone)
    offset_h = (start_s % 86400) / 3600
    span = max(float(hours[-1]), 1.0)
    if span > 48:  # days: a tick at each midnight (UTC), named by its day
        ticks = np.arange((24 - offset_h) % 24, span + 1e-9, 24)
        labels = [f"day {int((t + offset_h) // 24) + 1}" for t in ticks]
        ax.set_xlabel(f"day of the log (ticks at 00:00 {zone})")
    else:
        step = 1 if span <= 12 else 6
        ticks = np.arange(0, span + 1e-9, step)
        labels = [clock(int(round((t + offset_h) * 60)) % 1440) for t in ticks]
        ax.set_xlabel(f"clock ({zone})" if start_s else "time from the first request (HH:MM)")
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels)


@styled
def plot_plan(rows, hpa_run=None, *, start_s: float = 0.0, zone: str = "UTC"):
    """A plan's policies over the log's traffic, one small panel each: the arrivals (grey) and
    that policy's ready capacity (req/s, per minute), with the HPA's replay averaged per minute
    in a panel of its own when given. Minutes short of capacity are marked in red.

    ``rows`` are ``plan.ReplayRow``; the x axis is hours from the log's first minute, labelled
    with the clock (in ``zone``, the wall clock ``start_s`` is on) when ``start_s`` places the
    log on it.
    """
    first = rows[0].result
    hours = np.arange(first.rate.size) / 60
    series = [(row.policy.name, row.result.ready_capacity) for row in rows]
    if hpa_run is not None:
        per_min = hpa_run.ready[: first.rate.size * 60].reshape(-1, 60).mean(axis=1)
        series.append(("the HPA written, replayed", per_min * first.mu_star_rps))
    fig, axes = plt.subplots(
        len(series), 1, figsize=(WIDTH_IN, 1.55 * len(series) + 1.0), sharex=True, sharey=True
    )
    axes = np.atleast_1d(axes)
    for ax, (name, capacity) in zip(axes, series, strict=True):
        ax.fill_between(hours, first.rate, step="post", color="0.82", lw=0, label="arrivals")
        ax.step(hours, capacity, where="post", color="tab:blue", lw=1.2, label="ready capacity")
        short = first.rate > capacity + 1e-9
        if short.any():
            ax.plot(hours[short], first.rate[short], "|", color="tab:red", ms=6, label="short")
        ax.set_title(name, loc="left", fontsize=MIN_FONT_PT + 1, pad=3)
        ax.set_ylabel("req/s")
    top = 1.05 * max(float(np.max(first.rate)), *(float(np.max(c)) for _, c in series))
    axes[0].set_ylim(0, top)
    _plan_ticks(axes[-1], hours, start_s, zone)
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


@styled
def plot_plan_sensitivity(
    startups,
    per_million: dict,
    uncovered: dict,
    promises=None,
    mu_stars=None,
    cost=None,
    *,
    currency: str = "currency of the hourly price",
):
    """How a plan moves: each policy's price per million answer tokens against the start-up
    time (a; a hollow marker where the policy leaves minutes uncovered), and, when
    ``promises`` are given, μ* with the recommended policy's price against the TPOT promise
    (b)."""
    if promises is None:
        fig, left = plt.subplots(figsize=(WIDTH_IN, 5.0))
    else:
        fig, (left, right) = plt.subplots(2, 1, figsize=(WIDTH_IN, 8.4))
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
    left.set_ylabel(f"price per million\nanswer tokens ({currency})")
    left.set_ylim(bottom=0)
    left.legend(loc="lower right", ncol=2)
    if promises is None:
        left.set_title("price against the start-up time", loc="left")
        fig.tight_layout()
        return fig
    left.set_title("(a) price against the start-up time", loc="left")
    right.set_title("(b) μ* and price against the TPOT promise", loc="left")
    ms = np.asarray(promises) * 1000
    right.plot(ms, mu_stars, "o-", color="black", label="μ* (left axis)")
    right.set_xlabel("TPOT promise (ms)")
    right.set_ylabel("μ* (req/s)")
    twin = right.twinx()
    twin.spines["right"].set_visible(True)
    twin.plot(ms, cost, "s--", color="tab:red", label="recommended policy's price (right axis)")
    twin.set_ylabel(f"price per million\nanswer tokens ({currency})")
    handles = right.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    right.legend(handles, [h.get_label() for h in handles], loc="center right")
    fig.tight_layout()
    return fig


@styled
def plot_search(outcomes, best=None, *, currency: str = "USD"):
    """The configuration search: each screened candidate's price per million output tokens
    against its TTFT p90 (a) and TPOT p90 (b); the Pareto front filled, the others
    hollow, one colour per GPU, the answer ringed."""
    ok = [o for o in outcomes if o.ok]
    fig, axes = plt.subplots(2, 1, figsize=(WIDTH_IN, 8.0))
    gpus = sorted({o.candidate.gpu for o in ok})
    colours = dict(zip(gpus, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for ax, attr, label in (
        (axes[0], "ttft_p90_s", "TTFT p90 at the operating rate (ms)"),
        (axes[1], "tpot_p90_s", "TPOT p90 at the operating rate (ms)"),
    ):
        ax.set_title(f"({'ab'[attr == 'tpot_p90_s']}) against {label.split(' at ')[0]}", loc="left")
        for gpu in gpus:
            mine = [o for o in ok if o.candidate.gpu == gpu]
            for front, fill in ((True, colours[gpu]), (False, "white")):
                pts = [o for o in mine if o.pareto == front]
                if pts:
                    ax.plot(
                        [1000 * getattr(o, attr) for o in pts],
                        [o.per_million_output for o in pts],
                        "o",
                        color=colours[gpu],
                        mfc=fill,
                        label=f"{gpu}{' (Pareto front)' if front else ''}",
                    )
        if best is not None:
            ax.plot(
                1000 * getattr(best, attr),
                best.per_million_output,
                "o",
                ms=16,
                mfc="none",
                color="black",
                label="the answer",
            )
        ax.set_xlabel(label)
        ax.set_ylabel(f"price per million\noutput tokens ({currency})")
        ax.set_ylim(bottom=0)
    axes[0].legend(loc="upper right", ncol=2)
    fig.tight_layout()
    return fig


REGIME_STYLE = {
    "saturation": ("o", "#0072B2"),
    "prefill-heavy": ("s", "#D55E00"),
    "low-load": ("^", "#009E73"),
}
"""Marker and colour (Okabe-Ito, safe for colour-blind readers) of each regime of the published
set: the marker tells them apart without the colour."""


@styled
def plot_published(results, *, band: float = 1.25):
    """Predicted over published for every row, against the published value (each in its own
    unit, tokens/s or ms), both on log axes: the ``band``× band around 1 shaded; one marker
    shape and colour per regime."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.6))
    published = np.array([m.published for m, _, _ in results])
    ax.axhspan(1 / band, band, color="0.9", lw=0, label=f"within {band:g}×")
    ax.axhline(1.0, color="black", lw=1)
    for regime, (marker, colour) in REGIME_STYLE.items():
        rows = [(m.published, r) for m, _, r in results if m.regime == regime]
        if rows:
            x, y = np.array(rows).T
            ax.scatter(x, y, marker=marker, s=28, color=colour, label=regime, zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(published.min() / 2, published.max() * 2)
    ax.set_ylim(0.5, 2.0)
    _plain_log(ax, "x")
    ax.set_yticks([0.5, 0.8, 1.0, 1.25, 2.0])
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xlabel("published value (tokens/s or ms)")
    ax.set_ylabel("predicted / published")
    ax.grid(False)
    _legend_below(fig, ax, ncol=4)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig

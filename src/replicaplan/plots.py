"""Figure functions: the notebooks call these, so a figure is drawn the same way everywhere."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .day import DayResult, clock


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
        ax.step(minutes[sel], first.rate[sel], where="post", color="black", lw=1.6,
                label="arrivals λ(t)")
        for (label, r), ls in zip(results.items(), styles):
            line, = ax.step(minutes[sel], r.ready_capacity[sel], where="post", ls=ls, lw=1.3,
                            label=f"ready capacity, {label}")
            m = minutes[sel]
            short = r.rate[sel] > r.ready_capacity[sel]
            ax.bar(m[short], (r.rate[sel] - r.ready_capacity[sel])[short], width=1, align="edge",
                   bottom=r.ready_capacity[sel][short], color=line.get_color(), alpha=0.35)
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

"""How every figure of the book is made: one style, the notebook's PNG, the phone rendering.

The figure functions (``plots``) draw under ``styled``; the style is set here and nowhere else:

* every figure is ``WIDTH_IN`` inches wide at ``DPI`` dots per inch, the width of the book's text
  column at a desktop's 1,400 px, so it is shown at its design size and no text is scaled down;
* no text is smaller than ``MIN_FONT_PT`` points (tick labels, legends, annotations), and every
  axis names its quantity and its unit;
* in a notebook, figures are sent as PNG at twice ``DPI`` (sharp on high-density screens),
  reduced to a 256-colour palette, which keeps a line chart's file small and is byte-for-byte
  reproducible, with the design size in the output's metadata so the page shows it at 1×;
* each figure is also drawn for a phone (``phone_layout``: ``PHONE_WIDTH_IN`` wide, panels
  side by side stacked, one legend below in one column, fewer ticks on the x axis, long titles
  wrapped), and that rendering travels in the same output's metadata; the site serves it to
  narrow screens with ``<picture>`` (``_ext/site_fixes.py``). Panels are labelled (a), (b) in
  their titles, so a caption names them the same way in both layouts.
"""

from __future__ import annotations

import functools
import io

import matplotlib.pyplot as plt
from cycler import cycler

WIDTH_IN = 7.4
"""Width of every figure, inches (740 px at ``DPI``: the text column on a desktop)."""
DPI = 100
MIN_FONT_PT = 10.0
"""The smallest text in any figure, points."""

SERIES_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#5F5F5F"]
"""The series' colours, in order: Okabe and Ito's colour-blind-safe blue, vermillion, green and
reddish purple, then grey; each at least 3:1 against white (WCAG 1.4.11 for graphics), where
matplotlib's default orange is 2.5:1."""
SERIES_DASHES = ["-", "--", "-.", ":", (0, (6, 2, 1, 2, 1, 2))]
"""Each series' dash pattern, cycled with its colour: series differ by more than colour."""

STYLE = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "legend.framealpha": 0.9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": cycler(color=SERIES_COLOURS) + cycler(linestyle=SERIES_DASHES),
}
"""The book's matplotlib settings, applied by every figure function."""

ANNOTATION = {"fontsize": MIN_FONT_PT, "color": "dimgrey"}

PHONE_WIDTH_IN = 3.5
"""Width of a figure's phone rendering, inches (350 px: a 390 px phone's text column)."""
PHONE_TICKS = 5
"""The most labelled ticks on a phone rendering's x axis."""
PHONE_TITLE_CHARS = 28
"""Where a title is wrapped on a phone rendering."""
PHONE_LEGEND_CHARS = 40
"""Where a legend's label is wrapped on a phone rendering (its column is the figure's width)."""
PHONE_XLABEL_CHARS = 40
PHONE_YLABEL_CHARS = 34
"""Where an axis label is wrapped on a phone rendering (the y label runs along a short panel)."""


def _png_bytes(fig) -> bytes:
    """The figure as a 2× PNG with a 256-colour palette (byte-for-byte reproducible)."""
    from PIL import Image

    raw = io.BytesIO()
    fig.savefig(raw, format="png", dpi=2 * DPI, metadata={"Software": None})
    image = Image.open(raw).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="png", optimize=True)
    return out.getvalue()


def _size(fig) -> dict:
    width, height = fig.get_size_inches() * DPI
    return {"width": int(round(width)), "height": int(round(height))}


def _legend_entries(fig) -> tuple[list, list]:
    """Every legend's handles and labels (figure's and axes'), each label once, in order; the
    legends are removed."""
    handles, labels = [], []
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    for legend in legends:
        if legend is None:
            continue
        for h, t in zip(legend.legend_handles, legend.get_texts(), strict=True):
            if t.get_text() not in labels:
                handles.append(h)
                labels.append(t.get_text())
        legend.remove()
    fig.legends.clear()
    return handles, labels


def _fewer_ticks(ax) -> None:
    """At most ``PHONE_TICKS`` labelled ticks on the x axis, every k-th of those drawn."""
    if ax.get_xscale() != "linear":
        return
    lo, hi = sorted(ax.get_xlim())
    locs = [x for x in ax.get_xticks() if lo - 1e-9 <= x <= hi + 1e-9]
    if len(locs) <= PHONE_TICKS:
        return
    texts = {round(t.get_position()[0], 9): t.get_text() for t in ax.get_xticklabels()}
    step = -(-len(locs) // PHONE_TICKS)
    kept = locs[::step]
    if all(texts.get(round(x, 9)) for x in kept):  # labels set by hand (clock times, days)
        ax.set_xticks(kept, [texts[round(x, 9)] for x in kept])
    else:
        ax.set_xticks(kept)


def _wrapped(text: str, limit: int) -> str:
    """``text`` on lines of at most ``limit`` characters (hyphenated words kept whole), or as
    it is when it fits."""
    import textwrap

    flat = " ".join(text.split())
    return textwrap.fill(flat, limit, break_on_hyphens=False) if len(flat) > limit else text


def phone_layout(fig) -> None:
    """Lay ``fig`` out again, in place, for a phone's text column: ``PHONE_WIDTH_IN`` wide;
    panels drawn side by side stacked into a column; every legend gathered into one, in one
    column, below the panels; at most ``PHONE_TICKS`` ticks on each x axis; titles, axis labels
    and legend entries wrapped. The text keeps its size in points, so it reads as it does on a
    desktop."""
    panels = [ax for ax in fig.axes if ax.get_subplotspec() is not None]
    stacked = fig.get_size_inches()[1]  # the panels' height, one above the other
    if panels:
        nrows, ncols = panels[0].get_subplotspec().get_gridspec().get_geometry()
        if nrows == 1 and ncols > 1:  # side by side: one above the other, each as tall
            column = fig.add_gridspec(ncols, 1)
            for ax in panels:
                ax.set_subplotspec(column[ax.get_subplotspec().colspan.start, 0])
            stacked *= ncols
    handles, labels = _legend_entries(fig)
    for ax in fig.axes:
        _fewer_ticks(ax)
        ax.xaxis.label.set_text(_wrapped(ax.xaxis.label.get_text(), PHONE_XLABEL_CHARS))
        ax.yaxis.label.set_text(_wrapped(ax.yaxis.label.get_text(), PHONE_YLABEL_CHARS))
        for loc in ("center", "left"):
            title = ax.get_title(loc=loc)
            if _wrapped(title, PHONE_TITLE_CHARS) != title:
                ax.set_title(_wrapped(title, PHONE_TITLE_CHARS), loc=loc)
    entries = [_wrapped(t, PHONE_LEGEND_CHARS) for t in labels]
    lines = sum(t.count("\n") + 1 for t in entries)
    legend_height = 0.25 * lines + (0.2 if entries else 0)
    fig.set_size_inches(PHONE_WIDTH_IN, max(stacked * 0.85, 2.6) + legend_height)
    if entries:
        fig.legend(handles, entries, loc="outside lower center", ncol=1, frameon=False)
    fig.set_layout_engine("constrained")


def phone_png(fig) -> tuple[bytes, dict] | None:
    """The phone rendering of a figure drawn by a figure function of this module: the function
    run again with the same arguments (the figure shown is left as it is), then
    ``phone_layout``; as a 2× PNG and its design size. None for a figure drawn elsewhere."""
    redraw = getattr(fig, "_replicaplan_redraw", None)
    if redraw is None:
        return None
    phone = redraw()
    try:
        with plt.rc_context(STYLE):
            phone_layout(phone)
            return _png_bytes(phone), _size(phone)
    finally:
        plt.close(phone)


def _png(fig) -> tuple[bytes, dict]:
    """The figure as a 2× PNG with its design size as metadata, and its phone rendering
    (``phone_png``) in the metadata's ``phone`` entry (base64 PNG with its own size)."""
    import base64

    meta = _size(fig)
    phone = phone_png(fig)
    if phone is not None:
        meta["phone"] = {"png": base64.b64encode(phone[0]).decode("ascii"), **phone[1]}
    return _png_bytes(fig), meta


def _register_notebook_output() -> None:
    """Send figures to a notebook as ``_png`` does (a no-op outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the book's environment
        return
    shell = get_ipython()
    if shell is None:
        return
    from matplotlib.figure import Figure

    formatters = shell.display_formatter.formatters
    formatters["image/png"].for_type(Figure, _png)
    for mime in ("image/svg+xml", "application/pdf", "image/jpeg"):
        formatters[mime].pop(Figure, None)


def styled(draw):
    """Run a figure function under ``STYLE`` and register the notebook output once it drew."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with plt.rc_context(STYLE):
            fig = draw(*args, **kwargs)

        def redraw():
            with plt.rc_context(STYLE):
                return draw(*args, **kwargs)

        fig._replicaplan_redraw = redraw  # for its phone rendering (phone_png)
        _register_notebook_output()  # after the backend has set up its own formatters
        return fig

    return wrapper

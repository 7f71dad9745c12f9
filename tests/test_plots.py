"""The book's figure style, checked on every figure function: the design width, no text under
the minimum size, every axis labelled, and a legend that does not sit on the data."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from replicaplan.autoscalers.controllers import Fixed
from replicaplan.interface import figures, plots
from replicaplan.scenarios.synthetic import reference_traffic
from replicaplan.simulation.control import simulate_fleet
from replicaplan.simulation.day import simulate_day


def _figures():
    day = reference_traffic()
    chase = simulate_day(day)
    short = simulate_fleet(np.full(600, 30.0), Fixed(5), initial=5, startup_s=60)
    study = SimpleNamespace(
        error=[0.0, 0.1],
        uncovered_chase=[0, 3],
        uncovered_forecast=[0, 1],
        hours_chase=[90, 95],
        hours_forecast=[95, 98],
    )
    rows = [
        SimpleNamespace(policy=SimpleNamespace(name=name), result=simulate_day(day, reserve=r))
        for name, r in (("chase", 0), ("chase with spares", 3))
    ]
    return {
        "day": plots.plot_day({"chasing": chase}),
        "conformance": plots.plot_conformance(
            {"a": ([1, 2, 3], [1.0, 0.95, 0.5], [0.01, 0.01, 0.02]), "b": ([1, 2], [1.0, 0.9])},
            quota=0.9,
            mu_stars={"μ*": 2.1},
        ),
        "latency": plots.plot_latency_cdf({"x": np.linspace(0.1, 3, 50)}, threshold=1.0),
        "fleet": plots.plot_fleet({"fixed": short}, tick_s=120),
        "saturation": plots.plot_saturation(np.arange(10), {"m": np.linspace(0, 1, 10)}, batch=8),
        "cost": plots.plot_cost_curve(
            np.linspace(0.05, 1, 50), 0.2 / np.linspace(0.05, 1, 50), {"p": (0.5, 0.4)}
        ),
        "spot": plots.plot_spot_map(
            np.linspace(0, 0.9, 10),
            np.linspace(0, 0.9, 10),
            np.ones((10, 10)),
            {"case": (0.6, 0.1)},
        ),
        "roofline": plots.plot_roofline(
            1e15,
            3e12,
            {
                "decode": ([10, 100], [3e13, 3e14]),
                # a label as long as the chapters' (wrapped on the phone, not cut)
                "decode, 8,000 tokens of context, b = 1…1024": ([20, 200], [6e13, 6e14]),
            },
        ),
        "steps": plots.plot_step_times(
            np.arange(1, 65), {"c": np.linspace(0.01, 0.03, 64)}, floor_s=0.01, budget_ms=50
        ),
        "forecast": plots.plot_forecast_study(study),
        "plan": plots.plot_plan(rows),
        "sensitivity": plots.plot_plan_sensitivity(
            [5, 10],
            {"chase": [0.3, 0.31]},
            {"chase": [0, 2]},
            [0.025, 0.05],
            [6.0, 8.8],
            [0.6, 0.4],
        ),
    }


FIGURES = _figures()


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_width_and_text(name):
    fig = FIGURES[name]
    fig.canvas.draw()
    assert fig.get_size_inches()[0] == pytest.approx(figures.WIDTH_IN)
    sizes = [
        t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()
    ]
    assert sizes and min(sizes) >= figures.MIN_FONT_PT, (name, min(sizes))


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_axes_are_labelled(name):
    fig = FIGURES[name]
    for ax in fig.axes:
        if not ax.get_visible() or not ax.has_data():
            continue
        assert ax.get_ylabel().strip(), f"{name}: an axis without a y label"
        shares_x = any(
            ax is not other and ax.get_shared_x_axes().joined(ax, other) for other in fig.axes
        )
        if not shares_x:
            assert ax.get_xlabel().strip(), f"{name}: an axis without an x label"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_legend_clear_of_the_data(name):
    """A legend inside the axes must not cover a plotted point (figure legends sit outside)."""
    fig = FIGURES[name]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        for line in ax.get_lines():
            xy = ax.transData.transform(np.column_stack(line.get_data()).astype(float))
            inside = (
                (xy[:, 0] > box.x0)
                & (xy[:, 0] < box.x1)
                & (xy[:, 1] > box.y0)
                & (xy[:, 1] < box.y1)
            )
            assert inside.mean() < 0.02, f"{name}: the legend covers {line.get_label()!r}"


def teardown_module():
    plt.close("all")


PANELLED = {"day": 2, "fleet": 2, "forecast": 2, "sensitivity": 2}
"""Figures of several panels, and how many: each panel's title starts with its label."""


@pytest.mark.parametrize("name", sorted(PANELLED))
def test_panels_are_labelled_a_b_in_both_layouts(name):
    """Captions name panels (a), (b): the labels must be drawn, since the phone rendering
    stacks what the desktop one may put side by side."""
    fig = FIGURES[name]
    titles = [t for ax in fig.axes for t in (ax.get_title(loc="left"), ax.get_title()) if t.strip()]
    labels = sorted(t[:3] for t in titles if t.startswith("("))
    assert labels == [f"({c})" for c in "ab"[: PANELLED[name]]], titles


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_the_phone_rendering_is_whole_and_legible(name):
    """The phone rendering: PHONE_WIDTH_IN wide, every text at least MIN_FONT_PT and inside the
    canvas (nothing cut at an edge), panels in one column, one legend, and the figure shown
    on the page left as drawn."""
    import io

    from PIL import Image

    fig = FIGURES[name]
    before = fig.get_size_inches().copy()
    data, size = figures.phone_png(fig)
    assert (fig.get_size_inches() == before).all()
    assert Image.open(io.BytesIO(data)).size[0] == 2 * size["width"]
    assert size["width"] == round(figures.PHONE_WIDTH_IN * figures.DPI)
    phone = fig._replicaplan_redraw()
    with plt.rc_context(figures.STYLE):
        figures.phone_layout(phone)
    phone.canvas.draw()
    renderer = phone.canvas.get_renderer()
    canvas = phone.bbox
    texts = [t for t in phone.findobj(Text) if t.get_text().strip() and t.get_visible()]
    assert min(t.get_fontsize() for t in texts) >= figures.MIN_FONT_PT
    # everything drawn (ticks outside the view are not) lies on the canvas, in display units
    drawn = phone.get_tightbbox(renderer).transformed(phone.dpi_scale_trans)
    assert drawn.x0 >= canvas.x0 - 1 and drawn.x1 <= canvas.x1 + 1, (name, drawn, canvas)
    assert drawn.y0 >= canvas.y0 - 1 and drawn.y1 <= canvas.y1 + 1, (name, drawn, canvas)
    columns = {ax.get_subplotspec().get_geometry()[1] for ax in phone.axes if ax.get_subplotspec()}
    assert columns == {1}, name
    assert len(phone.legends) <= 1 and not [ax for ax in phone.axes if ax.get_legend()]
    plt.close(phone)

"""``interface.figures``: how every figure is made, on a figure of its own (the figure
functions' checks are in test_plots): the notebook's PNG at twice the design size in a
palette, byte for byte the same each time; colours that hold 3:1 against white (WCAG 1.4.11)
and series that differ by dash as well as by colour."""

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from replicaplan.interface import figures  # noqa: E402


@figures.styled
def _five_series():
    fig, ax = plt.subplots(figsize=(figures.WIDTH_IN, 3))
    x = np.linspace(0, 1, 20)
    for k in range(5):
        ax.plot(x, x * (k + 1), label=f"series {k}")
    ax.set_xlabel("x (s)")
    ax.set_ylabel("y (req/s)")
    return fig


def teardown_module():
    plt.close("all")


def test_the_notebook_png_is_twice_the_design_size_in_a_palette_and_reproducible():
    fig = _five_series()
    data, meta = figures._png(fig)
    image = Image.open(io.BytesIO(data))
    assert image.size[0] == 2 * meta["width"] == 2 * round(figures.WIDTH_IN * figures.DPI)
    assert image.mode == "P"  # a palette: small files
    assert figures._png(fig)[0] == data  # byte for byte
    assert "phone" in meta and meta["phone"]["width"] == round(figures.PHONE_WIDTH_IN * figures.DPI)


def _contrast(hex_colour: str) -> float:
    """WCAG 2 contrast ratio of a colour against white."""
    rgb = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    luminance = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    return 1.05 / (luminance + 0.05)


def test_series_colours_hold_contrast_and_differ_by_dash_too():
    """WCAG 1.4.11 asks 3:1 of graphics against their background (matplotlib's orange, 2.5:1,
    fails); and two series never differ by colour alone."""
    assert all(_contrast(c) >= 3.0 for c in figures.SERIES_COLOURS)
    assert _contrast("#ff7f0e") < 3.0  # the default orange the review measured at 2.53:1
    assert len(set(map(str, figures.SERIES_DASHES))) == len(figures.SERIES_COLOURS)
    lines = _five_series().axes[0].get_lines()
    # the dash pattern drawn (get_linestyle names the fifth, a custom one, as one of the four)
    assert len({str(line._dash_pattern) for line in lines}) == 5
    assert len({line.get_color() for line in lines}) == 5

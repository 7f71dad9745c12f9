"""Helpers for the chapter notebooks."""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "data"
"""The repository's data folder (the vendored logs), for the chapters run from a clone."""


def glue_number(name: str, value) -> None:
    """Glue a number for the text (``{glue:text}`name:.1f```), as a plain Python number.

    numpy scalars are converted first: their repr (``np.float64(…)``) cannot be formatted by
    myst-nb, and a strict build would fail on it.
    """
    from myst_nb import glue

    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"glue_number needs a real number for {name!r}, got {value!r}")
    glue(name, value, display=False)

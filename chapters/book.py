"""Helpers for the chapter notebooks: gluing numbers and worked formulas into the prose.

They live beside the chapters, not in the package: only a chapter uses them. A chapter run from
``chapters/`` imports them as ``book``; the front page, run from the root, as ``chapters.book``.
"""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data"
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


def glue_math(name: str, latex: str) -> None:
    """Glue a formula with its numbers in it, for ``{glue:md}`name:myst``` in the text.

    A worked calculation written as ``$\\mu - \\ln 10/\\tau$ = {glue:text}`...` − …`` switches
    font between the symbols and the numbers; gluing the whole line as one inline formula keeps
    it one formula, typeset by MathJax like every other.
    """
    from IPython.display import Markdown
    from myst_nb import glue

    if not isinstance(latex, str) or not latex.strip() or "$" in latex:
        raise ValueError(f"glue_math needs a LaTeX string without $ for {name!r}, got {latex!r}")
    glue(name, Markdown(f"${latex}$"), display=False)


def glue_words(name: str, text: str) -> None:
    """Glue words the package computed (a configuration's name, a policy's), for
    ``{glue:md}`name:myst``` in the text: the words, not their Python repr with its quotes."""
    from IPython.display import Markdown
    from myst_nb import glue

    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"glue_words needs non-empty text for {name!r}, got {text!r}")
    glue(name, Markdown(text), display=False)

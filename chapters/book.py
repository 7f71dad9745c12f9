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


def count_words(n, noun: str) -> str:
    """A count with its noun in the right number: "no minutes", "1 minute", "1,547 minutes"."""
    n = int(n)
    if n < 0:
        raise ValueError(f"count_words needs a count >= 0, got {n}")
    if n == 0:
        return f"no {noun}s"
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def glue_count(name: str, n, noun: str) -> None:
    """Glue a count with its noun (``{glue:md}`name:myst```): never "1 minutes" or "0 minutes"."""
    glue_words(name, count_words(n, noun))


def show_equation(lhs, rhs, note: str = "", order: str | None = None) -> None:
    """Display ``lhs = rhs`` as the package's sympy expressions print, in the prose's notation:
    natural logarithms as ln, and ``order`` ("none" keeps an unevaluated sum's own order,
    "rev-lex" writes λ(t + T) rather than sympy's λ(T + t)); ``note`` follows in text."""
    import sympy as sp
    from IPython.display import Math, display

    def latex(expr):
        return sp.latex(expr, ln_notation=True, order=order)

    text = f"{latex(lhs)} = {latex(rhs)}"
    if note:
        text += rf"\quad\text{{{note}}}"
    display(Math(text))

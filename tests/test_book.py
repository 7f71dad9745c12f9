import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chapters"))

from book import glue_number  # noqa: E402  (beside the chapters, not in the package)


def test_glue_number_rejects_non_numbers():
    with pytest.raises(ValueError, match="'x'"):
        glue_number("x", "7.5")
    with pytest.raises(ValueError, match="'flag'"):
        glue_number("flag", True)


def test_glue_number_unwraps_numpy(monkeypatch):
    seen = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: seen.update({name: value}))
    glue_number("a", np.float64(1.5))
    glue_number("b", np.int64(3))
    assert type(seen["a"]) is float and type(seen["b"]) is int


def test_no_equation_reference_is_wrapped_in_a_second_pair_of_parentheses():
    """``math_eqref_format`` prints an equation reference as "(4.1)"; a source that writes
    "({eq}`…`)" prints "((4.1))" (site review, m8)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    found = [
        f"{md.name}:{n}"
        for md in [*root.glob("chapters/*.md"), root / "intro.md", root / "glossary.md"]
        for n, line in enumerate(md.read_text().splitlines(), 1)
        if re.search(r"\(\s*\{eq\}`[^`]+`\s*\)", line)
    ]
    assert not found, found

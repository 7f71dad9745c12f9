import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chapters"))

from book import count_words, glue_number  # noqa: E402  (beside the chapters, not in the package)


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


def test_the_reference_list_sorts_organisations_by_their_letters():
    """pybtex keeps an organisation's braces in its sort key, and "{" sorts after "z": NVIDIA
    and the Kubernetes Authors came after Zhong (site review, m7)."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "_ext"))
    import bibstyle
    from pybtex.database import parse_file
    from pybtex.plugin import find_plugin

    bibstyle.register()
    style = find_plugin("pybtex.style.formatting", "replicaplan_author_year")()
    entries = list(style.sort(parse_file(root / "references.bib").entries.values()))
    keys = [e.key for e in entries]
    assert keys.index("nvidia_smi") < keys.index("zhong2024distserve")
    assert keys.index("k8s_hpa") < keys.index("kwon2023vllm") < keys.index("nvidia_smi")
    labels = list(style.label_style.format_labels(entries))
    assert labels[keys.index("source36")] == "Source chapter 36 n.d."


@pytest.mark.parametrize(
    "n, words",
    [(0, "no minutes"), (1, "1 minute"), (2, "2 minutes"), (1547, "1,547 minutes")],
)
def test_count_words_puts_the_noun_in_its_number(n, words):
    assert count_words(n, "minute") == words


def test_count_words_refuses_a_negative_count():
    with pytest.raises(ValueError, match="count"):
        count_words(-1, "minute")

"""One notation: the glossary's table, the package's sympy symbols and the chapters agree."""

import re
from pathlib import Path

import sympy as sp

from replicaplan.core import symbols

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = (ROOT / "glossary.md").read_text(encoding="utf-8")
CHAPTERS = sorted((ROOT / "chapters").glob("*.md")) + [ROOT / "intro.md"]

# integration variables and the HPA's words, which the pages spell out rather than symbolise
NOT_NOTATION = {"w", "t", r"\text{metric}", r"\text{target}", r"\text{tolerance}"}


def _normal(latex: str) -> str:
    """`\\mu^{\\ast}` and `\\mu^\\ast` are the same symbol on a page: drop braces and spaces."""
    return re.sub(r"[{}\s]", "", latex)


def _table_symbols() -> set[str]:
    table = GLOSSARY.split(":name: tbl-notation", 1)[1].split("```", 1)[0]
    first_cells = [row.split("|")[1] for row in table.splitlines() if row.startswith("| $")]
    return {_normal(m) for cell in first_cells for m in re.findall(r"\$([^$]+)\$", cell)}


def test_every_symbol_of_the_package_is_in_the_notation_table():
    table = _table_symbols()
    declared = [v for v in vars(symbols).values() if isinstance(v, sp.Symbol)]
    declared_latex = {_normal(s.name) for s in declared} - {_normal(n) for n in NOT_NOTATION}
    assert len(declared_latex) > 30
    missing = sorted(declared_latex - table)
    assert not missing, (
        f"symbols declared in replicaplan.core.symbols but absent from the table: {missing}"
    )


def test_the_table_gives_each_symbol_once():
    table = GLOSSARY.split(":name: tbl-notation", 1)[1].split("```", 1)[0]
    found = [
        _normal(m)
        for m in re.findall(r"^\| (.*?) \|", table, flags=re.M)
        for m in re.findall(r"\$([^$]+)\$", m)
    ]
    assert len(found) == len(set(found)), sorted({s for s in found if found.count(s) > 1})


def test_raw_rate_and_capacity_print_as_the_table_writes_them():
    """μ and μ* both stand in the notation table, and the package prints each as the table
    writes it, so a derivation never shows one for the other."""
    assert _normal(r"\mu") in _table_symbols() and _normal(r"\mu^\ast") in _table_symbols()
    assert _normal(sp.latex(symbols.mu)) == _normal(r"\mu")
    assert _normal(sp.latex(symbols.mu_star)) == _normal(r"\mu^\ast")


def test_chapters_use_no_source_subscripts():
    """The source's Italian subscripts (pausa, avvio, picco, canale...) never reach a page."""
    italian = re.compile(
        r"_\\?\{?\\text\{(pausa|avvio|ora|picco|canale|pesi|macchina|immagine|preavviso)\}"
    )
    hits = [
        (p.name, m.group())
        for p in CHAPTERS
        for m in italian.finditer(p.read_text(encoding="utf-8"))
    ]
    assert not hits, hits

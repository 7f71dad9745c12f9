"""The authoring loop: MyST sources, their executed .ipynb twins, and tools/notebooks.py."""

import importlib.util
import re
import shutil
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("notebooks_tool", ROOT / "tools" / "notebooks.py")
notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(notebooks)

SOURCES = notebooks.sources()
# every text a reader sees: the MyST notebooks and the plain reference pages
PAGES = [*SOURCES, ROOT / "glossary.md", ROOT / "bibliography.md", ROOT / "execution.md"]
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def test_every_chapter_of_the_toc_has_a_myst_source():
    toc = (ROOT / "_toc.yml").read_text()
    for stem in re.findall(r"file: (chapters/\w+)", toc):
        assert (ROOT / f"{stem}.md").exists(), stem
    assert len(SOURCES) == 1 + len(re.findall(r"file: chapters/", toc))


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_notebook_matches_its_myst_source(md):
    assert notebooks.out_of_sync(md) is None


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_notebook_was_executed_with_the_current_code(md):
    """The stored outputs (figures included, which nbval does not compare) come from this tree."""
    digest = notebooks.inputs_hash(md, notebooks.shared_inputs_hash())
    assert notebooks.stored_hash(md) == digest, f"{md.name}: stale outputs, run `make notebooks`"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_control_character_in_the_sources(page):
    text = page.read_text(encoding="utf-8")
    bad = [(text.count("\n", 0, m.start()) + 1, repr(m.group())) for m in CONTROL.finditer(text)]
    assert not bad, f"{page.name}: control characters at (line, char) {bad[:5]}"


@pytest.mark.slow
def test_notebook_is_byte_identical_when_executed_again(tmp_path):
    """Re-running the tool on an unchanged chapter rewrites the very same bytes."""
    md = ROOT / "chapters" / "opening.md"
    copy = tmp_path / md.name
    shutil.copy(md, copy)
    for helper in (ROOT / "chapters").glob("*.py"):  # the chapters' own helpers, beside them
        shutil.copy(helper, tmp_path / helper.name)
    assert notebooks.execute(copy, notebooks.stored_hash(md)) is None
    assert copy.with_suffix(".ipynb").read_bytes() == md.with_suffix(".ipynb").read_bytes()


def test_a_failing_cell_is_named_and_the_old_notebook_kept(tmp_path):
    md = tmp_path / "broken.md"
    md.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
        "# Broken\n\n```{code-cell} ipython3\nx = 1\n```\n\ntext\n\n"
        "```{code-cell} ipython3\n1 / 0\n```\n"
    )
    old = tmp_path / "broken.ipynb"
    old.write_text("previous notebook")
    error = notebooks.execute(md, "0" * 16)
    assert error is not None
    assert "code cell 2 (line 20)" in error and "ZeroDivisionError" in error
    assert old.read_text() == "previous notebook"
    assert not list(tmp_path.glob("*.tmp"))


def test_normalise_gives_content_ids_and_drops_timing():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("x = 1")]
    nb.cells[0].metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="a"),
        nbformat.v4.new_output("stream", name="stdout", text="b"),
    ]
    out = notebooks.normalise(nb, "abc")
    assert out.cells[0].id != out.cells[1].id and out.cells[1].id.startswith(out.cells[0].id)
    assert "execution" not in out.cells[0].metadata
    assert [o.text for o in out.cells[0].outputs] == ["ab"]
    assert out.metadata == {
        "kernelspec": notebooks.KERNEL,
        "language_info": {"name": "python"},
        "replicaplan": {"inputs": "abc"},
    }

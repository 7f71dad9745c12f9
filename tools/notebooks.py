"""Execute the MyST chapters into the paired ``.ipynb`` notebooks that nbval and the site read.

The ``.md`` file of a chapter (a jupytext MyST notebook) is the one a person edits; its ``.ipynb``
twin holds the executed outputs. This script is the only writer of the twins:

    python tools/notebooks.py            # refresh every notebook whose inputs changed
    python tools/notebooks.py --force    # re-execute all of them
    python tools/notebooks.py --check    # exit 1 if a notebook's cells differ from its .md

A notebook's *inputs* are its ``.md`` file, the package's source (``src/replicaplan``), the
vendored data (``data/``) and ``requirements.txt``; their hash is stored in the notebook's
metadata, so an unchanged tree is not executed again and a changed one always is. Outputs are
written with deterministic cell ids (a hash of the cell's source), no timestamps and no
kernel-version metadata: running the script twice on an unchanged tree changes no byte. A
notebook whose cell fails is reported with the chapter, the cell number and the line of the
``.md`` where that cell starts, and its previous ``.ipynb`` is left untouched.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INPUT_GLOBS = ("src/replicaplan/**/*.py", "chapters/*.py", "data/**/*", "requirements.txt")
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


def sources() -> list[Path]:
    """The MyST notebooks of the book: the front page and every chapter."""
    return [ROOT / "intro.md", *sorted((ROOT / "chapters").glob("*.md"))]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def twin(md: Path) -> Path:
    return md.with_suffix(".ipynb")


def shared_inputs_hash() -> str:
    digest = hashlib.sha256()
    for pattern in INPUT_GLOBS:
        for path in sorted(ROOT.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def inputs_hash(md: Path, shared: str) -> str:
    return hashlib.sha256(shared.encode() + md.read_bytes()).hexdigest()[:16]


def read_source(md: Path):
    import jupytext

    return jupytext.read(md, fmt="md:myst")


def cell_sources(nb) -> list[tuple[str, str]]:
    return [(cell.cell_type, cell.source.strip()) for cell in nb.cells]


def out_of_sync(md: Path) -> str | None:
    """Why the ``.ipynb`` twin of ``md`` does not match it, or None when it does."""
    import nbformat

    target = twin(md)
    if not target.exists():
        return f"{target.relative_to(ROOT)} is missing"
    want = cell_sources(read_source(md))
    have = cell_sources(nbformat.read(target, as_version=4))
    if len(want) != len(have):
        return f"{target.relative_to(ROOT)} has {len(have)} cells, {md.name} has {len(want)}"
    for index, (a, b) in enumerate(zip(want, have, strict=True)):
        if a != b:
            return f"{target.relative_to(ROOT)}: cell {index} differs from {md.name}"
    return None


def _cell_lines(md: Path) -> list[int]:
    """The line of ``md`` where each code cell starts (1-based), for error messages."""
    lines = md.read_text(encoding="utf-8").splitlines()
    return [n + 1 for n, line in enumerate(lines) if line.startswith("```{code-cell}")]


def _merge_streams(outputs):
    """Join consecutive stdout (or stderr) chunks: how the kernel splits them depends on timing."""
    merged = []
    for output in outputs:
        if (
            output.get("output_type") == "stream"
            and merged
            and merged[-1].get("output_type") == "stream"
            and merged[-1]["name"] == output["name"]
        ):
            merged[-1]["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def normalise(nb, digest: str):
    """Deterministic ids and metadata: no timestamps, no kernel or jupytext versions."""
    seen: dict[str, int] = {}
    for cell in nb.cells:
        base = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:10]
        seen[base] = seen.get(base, 0) + 1
        cell["id"] = base if seen[base] == 1 else f"{base}-{seen[base]}"
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = _merge_streams(cell.get("outputs", []))
            for output in cell.outputs:
                output.get("metadata", {}).pop("execution", None)
    nb.metadata = {
        "kernelspec": dict(KERNEL),
        "language_info": {"name": "python"},
        "replicaplan": {"inputs": digest},
    }
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def execute(md: Path, digest: str) -> str | None:
    """Execute ``md`` and write its twin; return an error message, or None on success."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = read_source(md)
    nb.metadata["kernelspec"] = dict(KERNEL)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        record_timing=False,
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
        resources={"metadata": {"path": str(md.parent)}},
    )
    try:
        client.execute()
    except CellExecutionError as error:
        code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        failed = next(
            (
                i
                for i in code_cells
                if any(o.get("output_type") == "error" for o in nb.cells[i].get("outputs", []))
            ),
            None,
        )
        where = ""
        if failed is not None:
            number = code_cells.index(failed)
            lines = _cell_lines(md)
            line = lines[number] if number < len(lines) else "?"
            where = f" code cell {number + 1} (line {line})"
        name = getattr(error, "ename", "error")
        value = getattr(error, "evalue", str(error))
        return f"{_shown(md)}:{where} failed: {name}: {value}"
    target = twin(md)
    text = nbformat.writes(normalise(nb, digest))
    tmp = target.with_suffix(".ipynb.tmp")
    tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return None


def stored_hash(md: Path) -> str | None:
    import json

    target = twin(md)
    if not target.exists():
        return None
    try:
        return json.loads(target.read_text(encoding="utf-8"))["metadata"]["replicaplan"]["inputs"]
    except (KeyError, ValueError, TypeError):
        return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="re-execute every notebook")
    parser.add_argument(
        "--check", action="store_true", help="only check that every .ipynb matches its .md"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="notebooks executed at once (default: 2, or fewer CPUs)",
    )
    parser.add_argument(
        "only", nargs="*", type=Path, help="the .md files to refresh (default: all)"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    mds = [p.resolve() for p in args.only] or sources()
    for md in mds:
        if md.suffix != ".md" or not md.exists():
            parser.error(f"{md}: not a MyST notebook (.md) of the book")

    if args.check:
        problems = [p for p in map(out_of_sync, mds) if p]
        for problem in problems:
            print(f"out of sync: {problem} (run `make notebooks`)", file=sys.stderr)
        return 1 if problems else 0

    shared = shared_inputs_hash()
    jobs = [(md, inputs_hash(md, shared)) for md in mds]
    stale = [(md, h) for md, h in jobs if args.force or stored_hash(md) != h]
    if not stale:
        print(f"notebooks: all {len(jobs)} up to date")
        return 0
    print(
        f"notebooks: executing {len(stale)} of {len(jobs)}: "
        + ", ".join(md.stem for md, _ in stale),
        flush=True,
    )
    with ProcessPoolExecutor(max_workers=min(args.jobs, len(stale))) as pool:
        errors = [e for e in pool.map(execute, *zip(*stale, strict=True)) if e]
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

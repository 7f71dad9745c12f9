"""Wall time of the README's commands on a warm .venv and a cold _build/ (targets from issue 9).

Runs, in a throw-away copy of the working tree (so nothing here is rewritten):
  make book   with notebooks up to date (no execution) and with every notebook stale (--force),
  make test   (lint, strict build from stored outputs, pytest: unit, nbval, browser).
Prints each time against its target, as a ratio.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"make book": 20.0, "make book (every notebook executed)": 20.0, "make test": 35.0}


def run(cmd: list[str], cwd: Path) -> float:
    # the borrowed .venv has the package installed from ROOT: import the copy's own source
    env = {**os.environ, "PYTHONPATH": str(cwd / "src")}
    start = time.perf_counter()
    subprocess.run(
        cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "tree"
        ignore = shutil.ignore_patterns("_build", ".git", ".venv")
        shutil.copytree(ROOT, work, symlinks=True, ignore=ignore)
        os.symlink(ROOT / ".venv", work / ".venv")  # the warm virtual environment
        notebooks = [work / "intro.ipynb", *(work / "chapters").glob("*.ipynb")]
        stored = {nb: nb.read_text() for nb in notebooks}
        times = {"make book": run(["make", "book"], work)}
        shutil.rmtree(work / "_build")
        for nb in notebooks:  # mark every notebook stale: make book executes all of them
            nb.write_text(stored[nb].replace('"inputs": "', '"inputs": "stale-'))
        times["make book (every notebook executed)"] = run(["make", "book"], work)
        shutil.rmtree(work / "_build")
        for nb in notebooks:
            nb.write_text(stored[nb])
        times["make test"] = run(["make", "test"], work)
    for name, seconds in times.items():
        target = TARGETS[name]
        ratio = seconds / target
        print(f"{name:<40} {seconds:6.1f} s   target {target:4.0f} s   ratio {ratio:4.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The package's layers (pyproject's import-linter contract): kept by the tree, and broken by
an upward import planted in a copy of it."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(src: Path, config: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(src), "PATH": str(LINT.parent)}
    return subprocess.run(
        [str(LINT), "--config", str(config), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=src,
        timeout=120,
    )


def test_the_tree_keeps_its_layers():
    run = _lint(ROOT / "src", ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 kept, 0 broken" in run.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "src" / "replicaplan", tmp_path / "replicaplan")
    stats = tmp_path / "replicaplan" / "core" / "stats.py"
    stats.write_text(stats.read_text() + "\nfrom replicaplan.faces import report  # upward\n")
    run = _lint(tmp_path, ROOT / "pyproject.toml")
    assert run.returncode != 0
    assert "replicaplan.core.stats -> replicaplan.faces.report" in run.stdout, run.stdout

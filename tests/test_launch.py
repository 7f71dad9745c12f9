"""The launch path, as Binder takes it: a fresh environment without the package, the repository's
requirements.txt installing it (its ``-e .`` line) from the checkout, a chapter opened and run
from its own folder. Binder itself is out of reach (no network here but the package index), so
the environment is built the same way locally: a new venv, the pinned dependencies borrowed from
the project's .venv instead of downloaded again, and the package installed by pip from the
checkout as the requirements line does."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_chapter_runs_from_its_folder_in_a_fresh_environment(tmp_path):
    assert "-e ." in (ROOT / "requirements.txt").read_text().splitlines()
    assert "binderhub_url" in (ROOT / "_config.yml").read_text()
    venv = tmp_path / "binder"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    # the pinned dependencies, as a plain path: the project's own editable install of the
    # package is a .pth inside it, which a plain path entry does not run
    deps = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    Path(site, "deps.pth").write_text(deps + "\n")
    missing = subprocess.run([str(python), "-c", "import replicaplan"], capture_output=True)
    assert missing.returncode != 0, "the fresh environment already has the package"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(ROOT)],
        check=True,
    )
    run = (
        "import nbformat, nbclient\n"
        "nb = nbformat.read('opening.ipynb', as_version=4)\n"
        "nb.cells.append(nbformat.v4.new_code_cell("
        "'import sys, replicaplan; print(sys.executable); print(replicaplan.__file__)'))\n"
        "client = nbclient.NotebookClient(nb, timeout=600, resources={'metadata': {'path': '.'}})\n"
        "client.execute()\n"
        "print(nb.cells[-1].outputs[0].text)\n"
    )
    done = subprocess.run(
        [str(python), "-c", run], cwd=ROOT / "chapters", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    kernel_python, package = done.stdout.split()[-2:]
    assert Path(kernel_python).parent == python.parent  # the fresh environment ran the cells
    assert Path(package).is_relative_to(ROOT / "src")  # the package the checkout installed

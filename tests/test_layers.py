"""The package's layers (pyproject's import-linter contract): kept by the tree, and broken by
an upward import planted in a copy of it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_the_tree_keeps_its_contracts():
    run = _lint(ROOT / "src", ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 kept, 0 broken" in run.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "src" / "replicaplan", tmp_path / "replicaplan")
    stats = tmp_path / "replicaplan" / "core" / "stats.py"
    stats.write_text(stats.read_text() + "\nfrom replicaplan.interface import report  # upward\n")
    run = _lint(tmp_path, ROOT / "pyproject.toml")
    assert run.returncode != 0
    assert "replicaplan.core.stats -> replicaplan.interface.report" in run.stdout, run.stdout


def test_an_import_across_independent_layers_or_of_numpy_by_the_catalogue_breaks_them(tmp_path):
    shutil.copytree(ROOT / "src" / "replicaplan", tmp_path / "replicaplan")
    loadgen = tmp_path / "replicaplan" / "traffic" / "loadgen.py"
    loadgen.write_text(loadgen.read_text() + "\nfrom replicaplan.serving import fluid  # across\n")
    catalogue = tmp_path / "replicaplan" / "serving" / "catalogue.py"
    catalogue.write_text(catalogue.read_text() + "\nimport numpy  # heavy\n")
    run = _lint(tmp_path, ROOT / "pyproject.toml")
    assert run.returncode != 0
    assert "independence: traffic and serving BROKEN" in run.stdout, run.stdout
    assert "replicaplan.serving.catalogue -> numpy" in run.stdout, run.stdout


# ------------------------------------------------------------------ the doors stay true
def _contract_layers() -> list[str]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (layers,) = [
        c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"
    ]
    return [name.removeprefix("replicaplan.") for name in layers]


def _modules(layer: str) -> set[str]:
    folder = ROOT / "src" / "replicaplan" / layer
    files = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    return files | {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}


def _table(text: str, layers: list[str], pattern: str) -> dict:
    """{layer: modules} from the lines of ``text`` that ``pattern`` (with the layer's name and a
    group of its modules) matches, a layer's entry continued on the lines below it."""
    import re

    found: dict = {}
    current = None
    for line in text.splitlines():
        m = re.match(pattern, line)
        if m and m.group("layer") in layers:
            current = m.group("layer")
            found[current] = m.group("modules")
        elif current and re.match(r"^\s{10,}[a-z_]", line) and ":" not in found[current]:
            found[current] += " " + line.strip()
        else:
            current = None
    return {k: set(re.findall(r"[a-z_]+", v.split(":")[0])) for k, v in found.items()}


def test_the_layer_tables_list_every_module_in_the_contracts_order():
    """The package docstring's table, the README's file map and the front page's table name
    each layer's modules, all of them and only them, layers in the contract's order."""
    import re

    layers = _contract_layers()
    doc = (ROOT / "src" / "replicaplan" / "__init__.py").read_text()
    in_doc = _table(doc, layers, r"^\d (?P<layer>[a-z]+)\s+(?P<modules>.*)$")
    assert list(in_doc) == layers, list(in_doc)
    readme = (ROOT / "README.md").read_text()
    in_readme = _table(readme, layers, r"^\s{20,}(?P<layer>[a-z]+)\s{2,}(?P<modules>[a-z_, ]+)$")
    assert list(in_readme) == layers[::-1], list(in_readme)
    intro = (ROOT / "intro.md").read_text()
    rows = re.findall(r"^\| `(?P<layer>[a-z]+)` \| (?P<modules>[^|]+) \|", intro, re.M)
    in_intro = {layer: set(re.findall(r"`([a-z_]+)`", mods)) for layer, mods in rows}
    assert list(in_intro) == layers[::-1], list(in_intro)
    for layer in layers:
        for where, table in (("__init__", in_doc), ("README", in_readme), ("intro", in_intro)):
            assert table[layer] == _modules(layer), (where, layer, table[layer] ^ _modules(layer))


def test_the_catalogue_and_the_parser_load_no_numerical_library():
    """In a fresh process: the catalogue (names, shapes, datasheets, a GPU spelled out) and the
    whole command line's parser import neither numpy nor sympy."""
    code = (
        "import sys\n"
        "from replicaplan.serving.catalogue import GPUS, MODELS, from_text\n"
        "from replicaplan.interface.cli import build_parser\n"
        "build_parser()\n"
        "from_text('gpu', 'memory_bytes=8e10,bandwidth=2e12,flops=3e14,link_bandwidth=3e11')\n"
        "assert GPUS['h100-sxm'].price_per_gpu_hour and MODELS['llama-3-8b'].layers == 32\n"
        "print(sorted(m for m in ('numpy', 'sympy', 'matplotlib') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_readmes_table_of_top_level_names_is_the_packages():
    """Every name ``from replicaplan import …`` offers resolves, and the README's table lists
    exactly those names (a name added to one and not the other fails here)."""
    import re

    import replicaplan

    readme = (ROOT / "README.md").read_text()
    start = readme.index("| from `replicaplan` | what it is |")
    rows = readme[start : readme.index("\n\n", start)].splitlines()[2:]
    listed = {n for row in rows for n in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert listed == set(replicaplan._EXPORTS)
    for name in listed:
        assert getattr(replicaplan, name) is not None


@pytest.mark.slow
def test_the_readmes_python_runs_as_written(monkeypatch):
    """The README's Python block, run as a reader pastes it (from the repository's root): the
    simulated day it prints is the source's row for the 8-minute chase (94.4 replica-hours, 8
    minutes short, 20 queued), and both plans come back, the strict one at its own ρ*."""
    import re

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert blocks, "the README has no Python block"
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("REPLICAPLAN_JOBS", "1")
    names: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), names)
    r = names["r"]
    assert (f"{r.paid_hours:.1f}", r.uncovered_minutes, r.queued_minutes) == ("94.4", 8, 20)
    assert names["p"].recommended.policy.name and names["strict"].point.target_utilization == 0.7
    assert names["strict"].min_replicas == 2

"""Doors that stay true: every name a docstring of the package puts in double backticks in the
dotted form of the package's own modules (``cost.price_run``, ``serving.engine``,
``ReplicaModel.from_hardware``) resolves to something that exists, so a moved or renamed function
leaves no docstring pointing at nothing."""

import ast
import builtins
import importlib
import pkgutil
import re

import pytest

import replicaplan

TICKED = re.compile(r"``([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)``")


def _modules() -> dict:
    """Every module of the package by its full name."""
    names = ["replicaplan"]
    for info in pkgutil.walk_packages(replicaplan.__path__, "replicaplan."):
        names.append(info.name)
    return {name: importlib.import_module(name) for name in names}


MODULES = _modules()
# what a docstring may start a dotted name with: a module by its last part or its layer-qualified
# name ("cost", "economics.cost"), a layer, or a class or function of the package
SHORT: dict = {}
for full, module in MODULES.items():
    parts = full.split(".")
    for k in range(1, len(parts)):
        SHORT.setdefault(".".join(parts[k:]), []).append(module)
TOP = {}
for module in MODULES.values():
    for name, value in vars(module).items():
        if isinstance(value, type) and str(getattr(value, "__module__", "")).startswith(
            "replicaplan"
        ):
            TOP.setdefault(name, value)


def _resolve(dotted: str, home) -> bool:
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):  # the longest prefix that is a module of the package
        head = ".".join(parts[:k])
        candidates = SHORT.get(head, []) + [MODULES[n] for n in (head,) if n in MODULES]
        if candidates:  # a short name may be two modules' (planner.plan, commands.plan)
            return any(_walk(module, parts[k:]) for module in candidates)
    first = parts[0]
    if hasattr(home, first):
        return _walk(getattr(home, first), parts[1:])
    if first in TOP:
        return _walk(TOP[first], parts[1:])
    return None  # not a name of the package (a field of YAML, another project's function)


def _walk(obj, rest) -> bool:
    for name in rest:
        if isinstance(obj, type) and name in getattr(obj, "__dataclass_fields__", {}):
            return True  # a dataclass field without a default is no class attribute
        if not hasattr(obj, name):
            return False
        obj = getattr(obj, name)
    return True


def _docstrings():
    for full, module in MODULES.items():
        tree = ast.parse(open(module.__file__, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    yield full, module, node, doc
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, str):  # an attribute's docstring
                    yield full, module, node, node.value.value


def test_every_dotted_name_in_a_docstring_resolves():
    stale: set = set()
    checked = 0
    for full, module, _node, doc in _docstrings():
        for dotted in TICKED.findall(doc):
            if dotted.split(".")[0] in vars(builtins):
                continue
            found = _resolve(dotted, module)
            if found is None:
                continue
            checked += 1
            if not found:
                stale.add(f"{full}: ``{dotted}``")
    assert checked > 100
    assert not stale, "\n".join(sorted(stale))


@pytest.mark.parametrize("dotted", ["cost.price_run", "serving.engine", "EXAMPLE.mu_star_rps"])
def test_the_resolver_finds_names_that_exist(dotted):
    assert _resolve(dotted, MODULES["replicaplan.core.example"])


@pytest.mark.parametrize(
    "dotted",
    ["replica.from_text", "interface.faces", "ReplicaModel.price_per_hour", "cost.no_such"],
)
def test_the_resolver_refuses_names_that_do_not(dotted):
    assert _resolve(dotted, MODULES["replicaplan.core.example"]) is False

"""``core.derived`` against the sympy derivations it is written from (``tools/derive.py``).

The numeric functions the planner runs are sympy's lambdify of the book's derived expressions,
written out so that the command line does not import sympy. Here every expression is derived
again: the file must be what the derivations give now, each function must compute the same
number as a fresh lambdify on the same inputs (exactly, not within a tolerance), a function
edited by hand must be caught, and the planner must run without sympy.
"""

import importlib.util
import math
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from replicaplan.core import derived

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("derive_tool", ROOT / "tools" / "derive.py")
derive = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(derive)

DERIVATIONS = derive.derivations()


def test_the_file_is_what_the_derivations_give_now():
    assert derive.generate() == derive.TARGET.read_text(encoding="utf-8"), (
        "core/derived.py is stale: run python tools/derive.py"
    )
    assert derive.main(["derive.py", "--check"]) == 0


def test_every_derivation_has_its_function_and_no_function_is_left_over():
    names = [name for name, *_ in DERIVATIONS]
    assert len(names) == len(set(names))
    written = {
        n for n, v in vars(derived).items() if callable(v) and v.__module__ == derived.__name__
    }
    assert written == set(names)


def _inputs(arity: int, kind: str, rng: np.random.Generator):
    """Positive inputs over eight decades (the symbols are declared positive); arrays for numpy."""
    draws = 10.0 ** rng.uniform(-4, 4, size=(arity, 64))
    if kind == "numpy":
        return [row for row in draws]
    return [list(col) for col in draws.T]


def _same(a, b) -> bool:
    return math.isnan(a) and math.isnan(b) if a != a else a == b


@pytest.mark.parametrize("entry", DERIVATIONS, ids=[e[0] for e in DERIVATIONS])
def test_each_function_computes_what_a_fresh_lambdify_computes(entry):
    """Exactly the number of lambdify on the code-named expression (what the file is written
    from), and within 4 ulp of lambdify on the book's own symbols, whose printed terms sympy may
    order otherwise (a product of floats in another order can round otherwise)."""
    name, args, expression, kind, _ = entry
    fresh = derive.lambdified(*derive.plain(args, expression), kind)
    book = derive.lambdified(args, expression, kind)
    written = getattr(derived, name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if kind == "numpy":
        x = _inputs(len(args), kind, rng)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(written(*x), fresh(*x))
            np.testing.assert_array_max_ulp(written(*x), book(*x), maxulp=4)
        return
    for x in _inputs(len(args), kind, rng):
        if name == "mm1_capacity":  # q is a quota, below 1
            x[-1] = x[-1] / (1 + x[-1])
        assert _same(written(*x), fresh(*x)), (name, x)
        assert math.isclose(written(*x), book(*x), rel_tol=4 * 2**-52), (name, x)


def test_a_function_edited_by_hand_is_caught():
    """A planted error (a product for a quotient in the ramp reserve) fails both checks."""
    text = derive.TARGET.read_text(encoding="utf-8")
    broken = text.replace(
        "T_start * lam_dot / (mu_star * rho_star)", "T_start * lam_dot * rho_star"
    )
    assert broken != text
    assert broken != derive.generate()
    namespace: dict = {}
    exec(compile(broken, "derived_broken.py", "exec"), namespace)
    (entry,) = [e for e in DERIVATIONS if e[0] == "ramp_reserve"]
    fresh = derive.lambdified(entry[1], entry[2], entry[3])
    x = (0.5, 480.0, 0.8, 9.0)  # a ramp of 0.5 req/s per s, 8 min, ρ* 0.8, μ* 9 req/s
    assert fresh(*x) == math.ceil(0.5 * 480 / (0.8 * 9)) == 34
    assert namespace["ramp_reserve"](*x) != fresh(*x)


def test_the_planner_runs_without_sympy():
    """``replicaplan plan`` on the vendored hour, in a fresh process: sympy never loads."""
    log = ROOT / "data/azure-llm-inference-2023/conv_sample.csv"
    code = (
        "import sys\n"
        "from replicaplan.interface import cli\n"
        f"code = cli.main(['plan', '--log', {str(log)!r}, '--json'])\n"
        "assert code in (0, None), code\n"
        "print('sympy' in sys.modules, file=sys.stderr)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip().splitlines()[-1] == "False"
    assert '"mu_star_rps"' in run.stdout

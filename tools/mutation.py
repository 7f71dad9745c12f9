"""Mutation testing of the modules whose tests must catch a wrong formula (``make mutation``).

For each module below, cosmic-ray (pinned in requirements-mutation.txt) makes every mutant of the
operators kept here, one small change at a time (a comparison turned strict or loose, + for -,
* for /, a number off by one, and for or, True for False, a ``not`` dropped, break for continue),
runs the module's own test files against it, and records whether a test failed (killed) or
not (survived). The score printed is killed / (mutants − the equivalent ones listed in
``tools/mutation-equivalents.toml``: changes no test can see, each with its reason), and every
other survivor is listed with its line.

    python tools/mutation.py                       # every module below (tens of minutes)
    python tools/mutation.py serving/queueing.py   # one module

Sessions and reports are written to ``_build/mutation/``; nothing in the tree is changed once
it ends (cosmic-ray writes each mutant into the file, runs the tests, and restores it).
Not part of ``make test``: a mutant run costs a test run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "mutation"
BIN = Path(sys.executable).parent

MODULES = {
    "serving/queueing.py": ["tests/test_queueing.py", "tests/test_derived.py"],
    "economics/cost.py": ["tests/test_cost.py", "tests/test_spot.py", "tests/test_derived.py"],
    "autoscalers/hpa.py": ["tests/test_hpa.py", "tests/test_derived.py"],
    "planner/reserve.py": ["tests/test_reserve.py", "tests/test_derived.py"],
    "autoscalers/manifest.py": ["tests/test_manifest.py"],
}
"""The modules mutated and the test files that must catch their mutants (#32's five)."""

KEPT = [
    r"core/ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Div|Pow_Mul)",
    r"core/ReplaceComparisonOperator_(Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Eq_NotEq|NotEq_Eq)",
    r"core/ReplaceComparisonOperator_(Is_IsNot|IsNot_Is|In_NotIn|NotIn_In)",
    r"core/ReplaceUnaryOperator_Delete_(Not|USub)",
    r"core/(ReplaceTrueWithFalse|ReplaceFalseWithTrue|ReplaceAndWithOr|ReplaceOrWithAnd)",
    r"core/(ReplaceBreakWithContinue|ReplaceContinueWithBreak|NumberReplacer)",
]
"""The operators run: those of the review that found the gaps (../shared/reviews/mutation.md)."""


def _operators() -> list[str]:
    out = subprocess.run(
        [str(BIN / "cosmic-ray"), "operators"], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def _excluded() -> list[str]:
    """cosmic-ray's operators-filter takes the operators to leave out, as regexes."""
    import re

    kept = [re.compile(p + "$") for p in KEPT]
    return ["^" + re.escape(op) + "$" for op in _operators() if not any(k.match(op) for k in kept)]


def _config(module: str, tests: list[str]) -> Path:
    name = module.replace("/", "_").removesuffix(".py")
    config = OUT / f"{name}.toml"
    # the module's doctests too, as `make test` runs them
    command = f"{sys.executable} -m pytest -x -q -p no:cacheprovider " + " ".join(
        [*tests, "--doctest-modules", f"src/replicaplan/{module}"]
    )
    lines = [
        "[cosmic-ray]",
        f'module-path = "src/replicaplan/{module}"',
        "timeout = 120.0",
        "excluded-modules = []",
        f"test-command = {json.dumps(command)}",
        "",
        "[cosmic-ray.distributor]",
        'name = "local"',
        "",
        "[cosmic-ray.filters.operators-filter]",
        f"exclude-operators = {json.dumps(_excluded())}",
    ]
    config.write_text("\n".join(lines) + "\n")
    return config


def _equivalents() -> dict:
    path = ROOT / "tools" / "mutation-equivalents.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


def _print_survivors(report: dict) -> None:
    for operator, text, row, col in report["survived"]:
        print(f"  {report['module']}:{row}:{col} {operator.removeprefix('core/')}: {text}")


def run(module: str, tests: list[str], *, execute: bool = True) -> dict:
    """Mutate ``module`` and run ``tests`` on each mutant (or, without ``execute``, read the
    session a previous run left) and score it."""
    OUT.mkdir(parents=True, exist_ok=True)
    config = _config(module, tests)
    session = config.with_suffix(".sqlite")
    cr = str(BIN / "cosmic-ray")
    if execute:
        session.unlink(missing_ok=True)
        subprocess.run([cr, "init", str(config), str(session)], check=True, cwd=ROOT)
        subprocess.run(
            [str(BIN / "cr-filter-operators"), str(session), str(config)], check=True, cwd=ROOT
        )
        subprocess.run([cr, "exec", str(config), str(session)], check=True, cwd=ROOT)
    dump = subprocess.run(
        [cr, "dump", str(session)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    source = (ROOT / "src" / "replicaplan" / module).read_text().splitlines()
    killed, survived = 0, []
    for line in dump.stdout.splitlines():
        job, result = json.loads(line)
        if result is None or result["worker_outcome"] == "skipped":
            continue
        mutation = job["mutations"][0]
        row, col = mutation["start_pos"]
        where = (mutation["operator_name"], source[row - 1].strip(), row, col)
        if result["test_outcome"] == "killed" or result["worker_outcome"] == "exception":
            killed += 1
        else:
            survived.append(where)
    # an equivalent mutant is named by its operator and the text of its line (stable while the
    # line is), with the reason no test can see it
    # (an entry with a ``col`` names one mutant of its line, where the line holds others)
    known = [(e["operator"], e["line"], e.get("col")) for e in _equivalents().get(module, [])]

    def listed(s) -> bool:
        return any(s[:2] == (op, line) and col in (None, s[3]) for op, line, col in known)

    equivalent = [s for s in survived if listed(s)]
    live = [s for s in survived if not listed(s)]
    total = killed + len(survived)
    score = killed / max(total - len(equivalent), 1)
    report = {
        "module": module,
        "mutants": total,
        "killed": killed,
        "equivalent": len(equivalent),
        "survived": live,
        "score": score,
    }
    (OUT / f"{config.stem}.json").write_text(json.dumps(report, indent=2))
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"of {', '.join(MODULES)} (default: all)")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="score the sessions a previous run left in _build/mutation, without running",
    )
    args = parser.parse_args(argv)
    for module in args.modules:
        if module not in MODULES:
            parser.error(f"{module}: not one of {', '.join(MODULES)}")
    chosen = args.modules or list(MODULES)
    rows = [run(m, MODULES[m], execute=not args.report_only) for m in chosen]
    print(f"{'module':28} {'mutants':>8} {'killed':>7} {'equiv.':>7} {'score':>7}")
    for r in rows:
        print(
            f"{r['module']:28} {r['mutants']:8} {r['killed']:7} {r['equivalent']:7} "
            f"{r['score']:7.1%}"
        )
    print("survivors (not listed as equivalent):")
    for r in rows:
        _print_survivors(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())

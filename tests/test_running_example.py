"""One running example on every page: the same μ*, μ, promises, GPU memory, price and currency.

The pages glue their numbers from the executed notebooks; these tests read the glued values of
every page (``test_exercises.glued``) and compare them with one another and with the source's
figures, and read the prose for numbers typed beside the symbols that must be glued.
"""

import re
from pathlib import Path

import pytest
from test_exercises import glued

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "intro.md", *sorted((ROOT / "chapters").glob("*.md"))]


GLUED = {md.stem: glued(md.stem) for md in PAGES}

# every name a page uses for the running example's μ* (the source's 8 req/s), for its
# promises, its GPU's memory and its price: one value each, the source's
EXAMPLE_NAMES = {
    "8 req/s, the example's mu*": (8.0, {"mu", "mu_ex", "el_mu", "book_mu", "rho_mu"}),
    "1 s TTFT promise": (1.0, {"ttft", "ttft_slo"}),
    "50 ms TPOT promise": (50.0, {"tpot_slo_ms"}),
    # the speed a full batch decodes at is another quantity (25 ms a token), never the promise
    "25 ms TPOT of a full batch": (25.0, {"tpot_ms", "tpot_full_ms"}),
    "80 GB of GPU memory": (80.0, {"gpu_gb"}),
    "2 EUR a replica-hour": (2.0, {"price", "ex_price"}),
}


@pytest.mark.parametrize("quantity", sorted(EXAMPLE_NAMES))
def test_every_page_states_the_running_example_alike(quantity):
    expected, names = EXAMPLE_NAMES[quantity]
    seen = 0
    for page, values in GLUED.items():
        for name in names & set(values):
            assert values[name] == pytest.approx(expected), (page, name, values[name])
            seen += 1
    assert seen >= 2, f"{quantity}: stated on fewer than two pages, nothing to compare"


def test_the_measured_mix_is_the_same_number_wherever_it_is_stated():
    # μ* of the simulated replica on the Azure mix: the front page, the capacity chapter and
    # the takeaways run the same seeded sweep and must agree to the last digit; the planner's
    # sweep (fewer requests per rate, its own draws) must land within two joint errors
    intro, cap = GLUED["intro"], GLUED["capacity"]
    assert intro["mix_mu_star"] == cap["mu_real"] == GLUED["takeaways"]["mu_star"]
    assert intro["mix_mu"] == cap["mu_mix"] and intro["mix_mu_se"] == cap["mu_se"]
    plan = GLUED["plan_your_fleet"]
    joint = (plan["w_mu_err"] ** 2 + cap["mu_se"] ** 2) ** 0.5
    assert abs(plan["w_mu"] - cap["mu_real"]) <= 2 * joint
    # and the order the glossary insists on: the capacity below the raw rate
    assert cap["mu_real"] < cap["mu_mix"]


# a number typed after the symbol in the prose: "$\mu^\ast$ = 8" or "μ* = 8.5" (glue writes
# "{glue:text}`…`" there instead)
TYPED = re.compile(r"(\\mu\^\\ast\$?|\\mu\$|μ\*?)\s*(=|≈|of)\s*[0-9]")


def _prose(md: Path) -> list[tuple[int, str]]:
    lines, inside = [], False
    for number, line in enumerate(md.read_text().splitlines(), start=1):
        if line.startswith("```"):
            inside = not inside and line.startswith("```{code-cell")
            continue
        if not inside:
            lines.append((number, line))
    return lines


@pytest.mark.parametrize("md", PAGES, ids=lambda p: p.stem)
def test_no_page_types_mu_or_mu_star(md):
    typed = [f"{md.name}:{n}: {line}" for n, line in _prose(md) if TYPED.search(line)]
    assert not typed, "\n".join(typed)

"""The book's notation as sympy symbols: one symbol per quantity, named once for every module.

Naming convention (the one rule for every derivation in the package):

* the Python name spells the book's symbol: Greek letters by name (``lam``, ``mu``, ``rho``,
  ``tau``, ``nu``, ``omega``), a star as ``_star`` (``mu_star`` is μ*), a bar as ``_bar``
  (``rho_bar`` is ρ̄), a dot as ``_dot`` (``lam_dot`` is λ̇), a subscript after an underscore
  (``N_r``, ``T_start``, ``M_w``, ``m_kv``, ``n_ctx``, ``P_peak``);
* the LaTeX name is what the book prints, so ``sp.latex`` of a derived expression shows the
  page's notation, never a Python identifier;
* every rate, time, size and price is declared positive, so sympy simplifies square roots,
  logarithms and limits the way the derivations on the pages do.

A module derives its closed forms from these symbols and lists them in its ``derivations()``;
``tools/derive.py`` turns each into a numeric function with ``lambdify_once`` (or
``lambdify_array``) and writes its source into ``core.derived``, which the chapters and the CLI
call. ``tests/test_derived.py`` derives them again, so the formula a page displays is the code
that runs, and the planner runs it without importing sympy.
"""

from __future__ import annotations

import sympy as sp

from replicaplan.core import _check


def _positive(latex: str) -> sp.Symbol:
    return sp.Symbol(latex, positive=True)


# --- load, service and capacity (capacity, queueing, reserve, day)
lam = _positive(r"\lambda")  # arrival rate, req/s
lam_dot = _positive(r"\dot{\lambda}")  # ramp of the arrival rate, req/s per s
delta_lam = _positive(r"\Delta\lambda")  # height of a step in the arrival rate
mu = _positive(r"\mu")  # raw service rate of a replica
mu_star = _positive(r"\mu^{\ast}")  # capacity within the promises
rho_star = _positive(r"\rho^{\ast}")  # target utilization
rho_bar = _positive(r"\bar{\rho}")  # mean utilization actually reached
tau = _positive(r"\tau")  # latency threshold of the M/M/1 illustration
q = _positive("q")  # conformance quota
w = _positive("w")  # a time in the system (integration variable)
t = _positive("t")  # time
R = _positive("R")  # spare replicas of a reserve
T_start = _positive(r"T_{\text{start}}")
lam_of = sp.Function(r"\lambda")  # λ(t), the arrival rate as a function of time

# --- autoscaling (autoscaler)
N_r = _positive("N_r")  # replicas running
metric = _positive(r"\text{metric}")
target = _positive(r"\text{target}")
tolerance = _positive(r"\text{tolerance}")

# --- cold start (coldstart)
T_machine = sp.Symbol(r"T_{\text{machine}}", nonnegative=True)
T_image = sp.Symbol(r"T_{\text{image}}", nonnegative=True)
T_weights = sp.Symbol(r"T_{\text{weights}}", nonnegative=True)
T_warmup = sp.Symbol(r"T_{\text{warmup}}", nonnegative=True)
M_w = _positive("M_w")  # bytes of weights
B_channel = _positive(r"B_{\text{channel}}")  # bandwidth of the slowest channel the weights cross
g = _positive("g")  # tensor-parallel GPUs

# --- cost (cost)
C_hour = _positive(r"C_{\text{hour}}")  # price of a replica-hour
nu_star = _positive(r"\nu^{\ast}")  # tokens/s a replica sustains within its promises
d = _positive("d")  # spot discount
omega = _positive(r"\omega")  # share of spot work lost or redone

# --- the roofline (roofline)
N_p = _positive("N_p")  # parameters
nu = _positive(r"\nu")  # tokens/s generated
P_peak = _positive(r"P_{\text{peak}}")  # dense FLOP/s
B_peak = _positive(r"B_{\text{peak}}")  # memory bandwidth, bytes/s
M_kv = _positive(r"M_{\text{kv}}")  # KV-cache bytes read by a decode step
TPOT = _positive(r"\text{TPOT}")  # seconds per decode step
b = _positive("b")  # sequences in a decode step
n_ctx = _positive(r"n_{\text{ctx}}")  # context tokens of a sequence
m_kv = _positive(r"m_{\text{kv}}")  # KV-cache bytes per token
n_layers = _positive(r"n_{\text{layers}}")
n_kv = _positive(r"n_{\text{kv}}")  # key/value heads
d_head = _positive(r"d_{\text{head}}")  # values per head
s_value = _positive(r"s_{\text{value}}")  # bytes per cached value

# --- the engine's step (replica)
F_ach = _positive(r"F_{\text{ach}}")  # FLOP/s a step's matrix products achieve
B_ach = _positive(r"B_{\text{ach}}")  # bytes/s a step's reads achieve
t_0 = _positive("t_0")  # floor of a step
t_seq = _positive(r"t_{\text{seq}}")  # time per decoded sequence
d_att = _positive(r"d_{\text{att}}")  # layers x hidden: attention FLOP are 4 d_att a pair
P_tok = sp.Symbol("P", nonnegative=True)  # prompt tokens a step carries
C_ctx = sp.Symbol("C", nonnegative=True)  # tokens of cache a step reads
A_att = sp.Symbol("A", nonnegative=True)  # positions the step's prompt tokens attend to


def lambdify_once(args: tuple, expression: sp.Expr):
    """A numeric function of ``args`` that evaluates ``expression``, with the book's rounding.

    ``ceiling`` and ``floor`` are the package's replica-count rules (``_check.ceil_count`` and
    ``_check.floor_count``), so a count computed from a displayed ⌈…⌉ rounds as every other
    count does. ``tools/derive.py`` writes its source out into ``core.derived``.
    """
    rules = {"ceiling": _check.ceil_count, "floor": _check.floor_count}
    return sp.lambdify(args, expression, [rules, "math"])


def lambdify_array(args: tuple, expression: sp.Expr):
    """As ``lambdify_once`` for numpy arrays (no rounding functions allowed in ``expression``)."""
    return sp.lambdify(args, expression, "numpy")

"""replicaplan: how many replicas of a language model to keep on, and what that capacity costs.

The package stands in nine layers, one subpackage each; a module imports only from its own
layer and the layers below it (``make test`` checks this with import-linter, see
``pyproject.toml``):

9 interface    cli, commands, options, files, report, plan_report, search_report, figures,
               plots: what a person types and reads (the command, its flags, text, figures)
8 scenarios    synthetic, studies: the book's reference day and its siblings, and the studies
               its chapters run (the policy table, the forecast study, the 21:00 event); no
               library layer imports them
7 planner      operating, calibration, reserve, schedule, behavior, replay, plan, grid,
               search, server, signals: a reader's own traffic turned into a plan, its
               manifests and the server's command
6 economics    cost, spot: the cost per token, a day priced, spot capacity
5 simulation   fleet, control, day, capacity, published, benchfit: fleets over time, the
               day, the capacity sweep, the published measurements, a benchmark fitted
4 autoscalers  hpa, kpa, controllers, manifest, engines, names, workload: what decides the
               fleet, its Kubernetes objects, the engines' metrics and the engine's Deployment
3 traffic      loadgen, logs, forecast: lengths and arrivals, a reader's logs, every forecast
2 serving      catalogue, replica, engine, trace, fluid, queueing, roofline, coldstart: one
               replica (the catalogue imports no numpy, for the command line's help)
1 core         example, promises, startup, sizing, _check, symbols, derived, stats,
               portable, parallel, stops, calendar: the running example, its promises,
               start-up and sizing (each checked once), checks, notation, the derived formulas
               written out, standard errors, portable floats, forked runs, stops that wait for
               a section to end, the calendar

(``tests/test_layers.py`` checks that this table, the README's and the front page's list every
module of each layer, in the contract's order.)

The chapters' own helpers (gluing numbers, the power-grid figures) live beside the chapters,
in ``chapters/``, not here.

Conventions. A formula the book displays is derived once with sympy from the symbols of
``core.symbols`` (Python names spell the book's notation: ``mu_star`` is μ*, ``rho_bar`` is ρ̄),
and the numeric function every caller runs is that expression lambdified, written out in
``core.derived`` by ``tools/derive.py`` (so the command line needs no sympy; a test derives
each one again and requires the same code and the same numbers). A count of replicas is rounded
by ``core._check.ceil_count`` and nowhere else. Models return numbers; only ``interface`` makes
text and figures.

The names most programs need are importable from the top (loaded on first use, so
``import replicaplan`` stays fast)::

    from replicaplan import plan, ReplicaModel, simulate_day, read_trace
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    # core
    "EXAMPLE": "core.example",
    "Promises": "core.promises",
    "Startup": "core.startup",
    "Sizing": "core.sizing",
    "ReplicaRate": "core.sizing",
    # serving
    "ReplicaModel": "serving.replica",
    "GPU": "serving.catalogue",
    "GPUS": "serving.catalogue",
    "MODELS": "serving.catalogue",
    "ModelShape": "serving.catalogue",
    "simulate_open": "serving.engine",
    "simulate_closed": "serving.engine",
    "FluidReplica": "serving.fluid",
    "MeasuredReplica": "serving.fluid",
    "replicas_needed": "serving.fluid",
    "mm1_capacity": "serving.queueing",
    # traffic
    "LengthMix": "traffic.loadgen",
    "AZURE_CONVERSATION": "traffic.loadgen",
    "read_trace": "traffic.logs",
    "read_rate_series": "traffic.logs",
    "poisson_arrivals": "traffic.loadgen",
    "reference_traffic": "scenarios.synthetic",
    "seasonal_forecast": "traffic.forecast",
    # autoscalers
    "HorizontalAutoscaler": "autoscalers.hpa",
    "KnativeAutoscaler": "autoscalers.kpa",
    "hpa_manifest": "autoscalers.manifest",
    "keda_scaled_object": "autoscalers.manifest",
    # simulation
    "simulate_day": "simulation.day",
    "policy_table": "scenarios.studies",
    "DayPolicy": "simulation.day",
    "DayResult": "simulation.day",
    "simulate_fleet": "simulation.control",
    "replica_sweep": "simulation.capacity",
    # economics
    "cost_per_token": "economics.cost",
    "price_day": "economics.cost",
    "Pricing": "economics.cost",
    "phase_prices": "economics.cost",
    "spot_cost_factor": "economics.cost",
    "simulate_spot_day": "economics.spot",
    # planner
    "plan": "planner.plan",
    "Plan": "planner.plan",
    "operating_point": "planner.plan",
    "ramp_reserve": "planner.reserve",
    "step_reserve": "planner.reserve",
    "search": "planner.search",
    "Candidate": "planner.search",
    # interface
    "write_report": "interface.plan_report",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"replicaplan.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'replicaplan' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))

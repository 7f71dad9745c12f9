"""``replicaplan search``: which configuration to rent (GPU, GPUs per replica, batch cap, token
budget, chunked or separate prefill), screened on the log and the cheapest that keeps the
promises planned as ``plan`` plans it."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from replicaplan.interface import options as opt
from replicaplan.interface.commands import fleet
from replicaplan.planner import grid as grid_defaults  # names only: imports no model
from replicaplan.serving.catalogue import GPUS, MODELS

MAX_JOBS = 1024
"""The most processes --jobs starts."""


def listed(option: str, kind, allowed=None, top: int | None = None):
    """An argparse type: a comma-separated grid of names among ``allowed`` or of integers from 1
    to ``top``, without repeats, at least one."""

    def parse(text: str) -> list:
        values = [v.strip() for v in str(text).split(",") if v.strip()]
        if not values:
            raise argparse.ArgumentTypeError("must name at least one value")
        out = []
        for v in values:
            if kind is int:
                try:
                    n = int(v)
                except ValueError:
                    n = 0
                if not 1 <= n <= top:
                    raise argparse.ArgumentTypeError(
                        f"{v!r} is not a whole number from 1 to {top:,}"
                    )
                out.append(n)
            elif v not in allowed:
                raise argparse.ArgumentTypeError(
                    f"unknown {v!r}; known: {', '.join(sorted(allowed))}"
                )
            else:
                out.append(v)
        return list(dict.fromkeys(out))

    parse.__name__ = option
    return parse


def add(sub) -> None:
    se = sub.add_parser(
        "search",
        help="which configuration to rent: GPUs, GPUs per replica, batch, token budget, "
        "chunked prefill, searched for your traffic",
        description="Screens a grid of replica configurations on the log (mu* with its "
        "standard error, TTFT and TPOT p90, the recommended fleet and its price per million "
        "input and output tokens), in parallel on this machine or a Dask cluster; plans the "
        "cheapest that keeps the promises within the shortfall budget as `plan` would, and "
        "marks the Pareto front of price against TTFT and TPOT p90.",
    )
    fleet.add_traffic(se)
    se.add_argument(
        "--model",
        required=True,
        help=f"model shape: a name ({', '.join(MODELS)}) or key=value,…",
    )

    def shown(values) -> str:
        return ",".join(str(v) for v in values)

    gpus = [g for g in GPUS if g != "example"]
    for option, values, kind, what in (
        (
            "--gpu-grid",
            grid_defaults.SEARCH_GPUS,
            listed("gpus", str, gpus),
            "GPUs from the catalogue",
        ),
        (
            "--gpus-grid",
            grid_defaults.SEARCH_GPUS_PER_REPLICA,
            listed("counts", int, top=opt.MAX_GPUS),
            f"GPUs per replica, 1 to {opt.MAX_GPUS}",
        ),
        (
            "--batch-grid",
            grid_defaults.SEARCH_BATCHES,
            listed("counts", int, top=opt.MAX_BATCH),
            f"batch caps, 1 to {opt.MAX_BATCH:,}",
        ),
        (
            "--budget-grid",
            grid_defaults.SEARCH_TOKEN_BUDGETS,
            listed("counts", int, top=opt.MAX_TOKEN_BUDGET),
            f"prefill token budgets, 1 to {opt.MAX_TOKEN_BUDGET:,}",
        ),
        (
            "--prefill-grid",
            ["chunked" if c else "separate" for c in grid_defaults.SEARCH_CHUNKED],
            listed("modes", str, ("chunked", "separate")),
            "chunked, separate, or both",
        ),
    ):
        se.add_argument(
            option, type=kind, default=shown(values), help=f"{what} (default: %(default)s)"
        )
    se.add_argument(
        "--gpu-price",
        action="append",
        type=opt.gpu_price,
        metavar="GPU=PRICE",
        help="price of one GPU-hour of a GPU, > 0, overriding the catalogue's list price (repeat)",
    )
    se.add_argument(
        "--requests",
        type=opt.whole(200, 100_000),
        default=grid_defaults.SEARCH_REQUESTS,
        help="requests per rate in each candidate's screening sweep, 200 to 100,000 "
        "(default: %(default)s)",
    )
    se.add_argument(
        "--jobs",
        type=opt.whole(1, MAX_JOBS),
        default=None,
        help=f"processes on this machine, 1 to {MAX_JOBS:,} (default: the CPUs)",
    )
    se.add_argument(
        "--dask",
        type=opt.dask_address,
        metavar="ADDRESS",
        help="a Dask scheduler (tcp://host:8786) to run on instead",
    )
    fleet.add_fleet_options(se)
    se.add_argument(
        "--replica",
        help="a replica file written by `replicaplan fit`: every configuration is built with "
        "the engine constants fitted there (floor, time per sequence, shares of the peaks)",
    )
    se.set_defaults(run=run)


def run(args: argparse.Namespace):
    from replicaplan.interface.files import FolderLocks

    outputs = fleet.checked_inputs(args)
    size = fleet.sizing(args)  # before any work: a ceiling under the floor is refused here
    with FolderLocks(outputs):  # one run at a time writes into a folder
        result = _run(args, outputs, size)
    fleet.served_model_note(args)  # once the objects are written, beside them
    return result


def _run(args: argparse.Namespace, outputs: dict, size):
    from replicaplan.interface import search_report
    from replicaplan.interface.plan_report import text as plan_text
    from replicaplan.planner import search as searching

    shape = fleet.hardware("model", args.model)
    candidates = searching.grid(
        args.gpu_grid,
        args.gpus_grid,
        args.batch_grid,
        args.budget_grid,
        [p == "chunked" for p in args.prefill_grid],
    )
    calibrated = ()
    if args.replica:
        from replicaplan.simulation import benchfit

        try:
            calibrated = tuple(sorted(benchfit.read_calibration(args.replica).items()))
        except ValueError as err:
            raise ValueError(f"--replica: {err}") from None
    settings = searching.Settings(
        calibration=calibrated,
        promises=fleet.promises(args),
        sizing=size,
        startup=fleet.startup(args),
        prices=tuple(sorted(dict(args.gpu_price or ()).items())),
        n_requests=args.requests,
    )
    client = None
    if args.dask:
        try:
            from distributed import Client

            client = Client(args.dask, timeout="5s")
        except (OSError, TimeoutError) as err:
            raise ValueError(f"--dask: cannot reach the scheduler at {args.dask} ({err})") from None
    log, lengths = fleet.traffic(args)
    shown = (lambda share: fleet.progress(share, "screening")) if sys.stderr.isatty() else None
    try:
        result = searching.search(
            log,
            shape,
            candidates,
            lengths=lengths,
            settings=settings,
            jobs=args.jobs,
            dask=client,
            progress=shown,
        )
    finally:
        if client is not None:
            client.close()
    # the refused candidates' reasons name the promises and the GPUs by the flags that set them
    named = [
        replace(o, reason=fleet.by_flags(o.reason).replace("(gpus)", "(--gpus-grid)"))
        for o in result.outcomes
    ]
    result = replace(result, outcomes=named)
    if result.best is None:
        return search_report.text(result) + "\nnothing written", 2
    best = result.best
    p = fleet.plan_of(
        args,
        log,
        lengths,
        best.candidate.replica(shape, settings.calibration),
        settings.price(best.candidate.gpu),
        size,
    )

    def add_search(folder: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from replicaplan.interface.plots import plot_search

        fig = plot_search(result.outcomes, best, currency=p.currency)
        fig.savefig(folder / "pareto.png", dpi=120)
        plt.close(fig)
        (folder / "search.md").write_text(search_report.markdown(result), encoding="utf-8")

    written = fleet.write(args, p, outputs, extra=add_search)
    command = server_command(args, shape, best.candidate, result.context)
    if args.json:
        plan_json = fleet.plan_json(args, p, log)
        summary = search_report.summary(result)
        return json.dumps({**summary, "server_command": command, "plan": plan_json}, indent=2)
    name = fleet.source_name(args)
    return (
        search_report.text(result)
        + f"\n\nserve it with:\n  {command}"
        + "\n\nits plan:\n"
        + plan_text(p, log=name)
        + fleet.written(written)
    )


def server_command(args: argparse.Namespace, shape, candidate, context: int) -> str:
    """The ``vllm serve`` line of the answer, under the name the plan's queries select."""
    from replicaplan.planner.server import vllm_command
    from replicaplan.serving.replica import MEMORY_UTILIZATION

    return vllm_command(
        shape.repo or shape.name,
        args.served_model or args.name,
        gpus=candidate.gpus,
        batch=candidate.batch,
        token_budget=candidate.token_budget,
        chunked=candidate.chunked,
        context=context,
        memory_utilization=MEMORY_UTILIZATION,
    )

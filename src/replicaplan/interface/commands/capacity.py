"""``replicaplan capacity``: the open-loop sweep of conformance against the arrival rate, and μ*
with its standard error (the batching replica on a length mix, or M/M/1 against its closed
form)."""

from __future__ import annotations

import argparse
import json

from replicaplan.interface import options as opt
from replicaplan.interface.commands.fleet import add_promises, promises

DEFAULT_RATES = "1:10:0.5"
"""The replica's default grid of rates (req/s)."""


def add(sub) -> None:
    cap = sub.add_parser(
        "capacity",
        help="open-loop capacity sweep: conformance vs rate, and mu*",
        description="Sweep the arrival rate in open loop and print the share of "
        "requests meeting the SLOs at each rate, and mu*.",
    )
    cap.add_argument(
        "--model",
        choices=("replica", "mm1"),
        default="replica",
        help="the batching replica (default) or the textbook M/M/1 server",
    )
    cap.add_argument("--mu", type=opt.positive, help="M/M/1 service rate, req/s, > 0")
    cap.add_argument("--tau", type=opt.positive, help="M/M/1 residence-time threshold, s, > 0")
    cap.add_argument(
        "--rates",
        type=opt.rate_grid,
        default=None,
        help="grid of rates that brackets mu*: start:stop:step or a,b,c, each > 0 "
        f"(default: {DEFAULT_RATES} for the replica, mu/20 to mu in 20 steps for mm1)",
    )
    cap.add_argument(
        "--resolution",
        type=opt.positive,
        default=0.02,
        help="width of the final bracket of the bisection for mu*, req/s, > 0 (default: 0.02)",
    )
    add_promises(cap)
    cap.add_argument(
        "--mix",
        choices=("azure", "identical"),
        default="azure",
        help="request lengths: the Azure conversation mix or identical requests",
    )
    cap.add_argument(
        "--requests",
        type=opt.whole(100, opt.MAX_REQUESTS),
        default=5000,
        help=f"requests per rate, 100 to {opt.MAX_REQUESTS:,} (default: %(default)s)",
    )
    cap.add_argument(
        "--precision",
        type=opt.open_share,
        default=0.02,
        help="relative standard error of mu* to reach with independent replications, in (0, 1) "
        "(default: 0.02; at least 5 and at most 12 replications)",
    )
    cap.add_argument(
        "--seed",
        type=opt.whole(0, opt.MAX_SEED),
        default=0,
        help="random seed, a whole number >= 0 (default: 0)",
    )
    cap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    cap.set_defaults(run=run)


def run(args: argparse.Namespace):
    from replicaplan.serving import queueing
    from replicaplan.simulation import capacity

    closed_form = None
    if args.model == "mm1":
        if args.mu is None or args.tau is None:
            raise ValueError(
                "--model mm1 needs --mu (service rate, req/s) and --tau (threshold, s)"
            )
        rates = args.rates or [round(args.mu * k / 20, 10) for k in range(1, 21)]
        sweep = capacity.mm1_sweep(
            rates,
            mu=args.mu,
            tau=args.tau,
            n_requests=args.requests,
            quota=args.quota,
            seed=args.seed,
            resolution=args.resolution,
            precision=args.precision,
        )
        closed_form = queueing.mm1_capacity(args.mu, args.tau, args.quota)
        slo = f"M/M/1, mu = {args.mu:g} req/s, residence <= {args.tau:g} s"
    else:
        sweep = capacity.replica_sweep(
            args.rates or opt.rate_grid(DEFAULT_RATES),
            mix=args.mix,
            n_requests=args.requests,
            promises=promises(args),
            seed=args.seed,
            resolution=args.resolution,
            precision=args.precision,
        )
        slo = (
            f"batching replica, {args.mix} lengths, TTFT <= {args.ttft_slo:g} s, "
            f"TPOT <= {args.tpot_slo * 1e3:g} ms"
        )
    status = 0 if sweep.bracketed else 1  # a script can tell "no capacity found" apart
    if args.json:
        out = sweep.to_dict()
        if closed_form is not None:
            out["mu_star_closed_form"] = closed_form
        return json.dumps(out, indent=2), status
    lines = [slo, f"{'rate':>8} {'conform.':>9} {'stderr':>8} {'batch se':>9}"]
    for p in sweep.points:
        lines.append(f"{p.rate:8.3f} {p.conformance:9.3f} {p.stderr:8.4f} {p.stderr_batch:9.4f}")
    if sweep.bracketed:
        lines.append(
            f"mu* = {sweep.mu_star:.3f} req/s ± {sweep.mu_star_stderr:.3f} (1 standard error, "
            f"{len(sweep.replicas)} independent replications; bisection to "
            f"{sweep.resolution:.3f}, {len(sweep.probes)} probes)"
            if sweep.replicas
            else f"mu* = {sweep.mu_star:.3f} req/s ± {sweep.resolution:.3f} (bisection, "
            f"{len(sweep.probes)} probes) ± {sweep.mu_star_stderr:.3f} (1 standard error)"
        )
        if sweep.replicas and sweep.mu_star_stderr > args.precision * sweep.mu_star:
            lines.append(
                f"note: --precision {args.precision:g} not reached in {len(sweep.replicas)} "
                "replications (the most it runs); give more --requests"
            )
    else:
        reason = sweep.not_bracketed_reason().replace("the grid of rates", "--rates")
        lines.append(f"no mu* in this range: {reason}")
    if closed_form is not None:
        lines.append(f"closed form mu - ln(1/(1 - q))/tau = {closed_form:.3f} req/s")
    return "\n".join(lines), status

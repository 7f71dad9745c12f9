"""The ``replicaplan`` command: the book's analyses on a reader's own numbers.

    replicaplan day [--capacity 8] [--target 0.8] [--startup 8] [--reserve 3] [--json]
    replicaplan capacity [--model replica|mm1] [--rates 1:10:0.5] [--quota 0.9] [--json] ...
"""

from __future__ import annotations

import argparse
import json
import sys

from .example import EXAMPLE


def _day(args: argparse.Namespace) -> str:
    from .day import event_request_line, format_policy_table, policy_table

    rows = policy_table(capacity=args.capacity, target=args.target, startup_min=args.startup,
                        spares=args.reserve)
    if args.json:
        return json.dumps([{"policy": p.name, **r.summary()} for p, r in rows], indent=2)
    return (format_policy_table(rows) + "\n\n"
            + event_request_line(capacity=args.capacity, target=args.target))


def _grid(text: str) -> list[float]:
    """'a:b:step' (inclusive of b) or a comma-separated list of rates."""
    try:
        if ":" in text:
            start, stop, step = (float(x) for x in text.split(":"))
            if step <= 0:
                raise ValueError
            n = int(round((stop - start) / step)) + 1
            return [round(start + k * step, 10) for k in range(n)]
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"rates must look like 1:10:0.5 or 2,4,6 (with step > 0), got {text!r}") from None


def _capacity(args: argparse.Namespace) -> str:
    from . import capacity

    if args.model == "mm1":
        if args.mu is None or args.tau is None:
            raise ValueError("--model mm1 needs --mu (service rate, req/s) and --tau (threshold, s)")
        sweep = capacity.mm1_sweep(args.rates, mu=args.mu, tau=args.tau, n_requests=args.requests,
                                   quota=args.quota, seed=args.seed)
        slo = f"M/M/1, mu = {args.mu:g} req/s, residence <= {args.tau:g} s"
    else:
        sweep = capacity.replica_sweep(args.rates, mix=args.mix, n_requests=args.requests,
                                       quota=args.quota, ttft_slo_s=args.ttft_slo,
                                       tpot_slo_s=args.tpot_slo, seed=args.seed)
        slo = (f"batching replica, {args.mix} lengths, TTFT <= {args.ttft_slo:g} s, "
               f"TPOT <= {args.tpot_slo * 1e3:g} ms")
    status = 0 if sweep.mu_star is not None else 1   # a script can tell "no capacity" apart
    if args.json:
        return json.dumps(sweep.to_dict(), indent=2), status
    lines = [slo, f"{'rate':>8} {'conform.':>9} {'stderr':>8} {'batch se':>9}"]
    for p in sweep.points:
        lines.append(f"{p.rate:8.3f} {p.conformance:9.3f} {p.stderr:8.4f} {p.stderr_batch:9.4f}")
    star = sweep.mu_star
    lines.append(f"mu* = {star:g} req/s (largest rate with conformance >= {sweep.quota:g})" if star is not None
                 else f"no rate in the grid meets the quota {sweep.quota:g}: capacity is below "
                      f"{sweep.points[0].rate:g} req/s or the SLOs cannot be met")
    return "\n".join(lines), status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="replicaplan",
        description="How many replicas to keep on, and what that capacity costs.")
    sub = parser.add_subparsers(dest="command", required=True)

    day = sub.add_parser("day", help="the simulated day: the five scaling policies compared",
                         description="Run the simulated day (the source's traffic) under five "
                                     "policies and print paid hours, uncovered and queued "
                                     "minutes, excess share and utilization.")
    day.add_argument("--capacity", type=float, default=EXAMPLE.capacity_rps,
                     help="μ*: requests/s one replica serves within its SLOs (default: %(default)s)")
    day.add_argument("--target", type=float, default=EXAMPLE.target_utilization,
                     help="ρ*: target utilization in (0, 1] (default: %(default)s)")
    day.add_argument("--startup", type=int, default=EXAMPLE.startup_min,
                     help="start-up time in whole minutes (default: %(default)s)")
    day.add_argument("--reserve", type=int, default=3,
                     help="spare replicas of the reserve policy (default: %(default)s)")
    day.add_argument("--json", action="store_true", help="print JSON instead of the table")
    day.set_defaults(run=_day)

    cap = sub.add_parser("capacity", help="open-loop capacity sweep: conformance vs rate, and mu*",
                         description="Sweep the arrival rate in open loop and print the share of "
                                     "requests meeting the SLOs at each rate, and mu*.")
    cap.add_argument("--model", choices=("replica", "mm1"), default="replica",
                     help="the batching replica (default) or the textbook M/M/1 server")
    cap.add_argument("--mu", type=float, help="M/M/1 service rate, req/s")
    cap.add_argument("--tau", type=float, help="M/M/1 residence-time threshold, s")
    cap.add_argument("--rates", type=_grid, default=_grid("1:10:0.5"),
                     help="grid of rates: start:stop:step or a,b,c (default: 1:10:0.5)")
    cap.add_argument("--quota", type=float, default=0.9, help="required share, in (0, 1) (default: 0.9)")
    cap.add_argument("--ttft-slo", type=float, default=1.0, help="TTFT SLO, s (default: 1.0)")
    cap.add_argument("--tpot-slo", type=float, default=0.05, help="TPOT SLO, s (default: 0.05)")
    cap.add_argument("--mix", choices=("azure", "identical"), default="azure",
                     help="request lengths: the Azure conversation mix or identical requests")
    cap.add_argument("--requests", type=int, default=5000, help="requests per rate (default: 5000)")
    cap.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    cap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    cap.set_defaults(run=_capacity)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = args.run(args)
    except ValueError as err:
        print(f"replicaplan {args.command}: error: {err}", file=sys.stderr)
        return 2
    text, status = result if isinstance(result, tuple) else (result, 0)
    print(text)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

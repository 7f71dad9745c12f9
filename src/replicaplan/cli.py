"""The ``replicaplan`` command: the book's analyses on a reader's own numbers.

    replicaplan day [--capacity 8] [--target 0.8] [--startup 8] [--reserve 3] [--json]
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        print(args.run(args))
    except ValueError as err:
        print(f"replicaplan {args.command}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

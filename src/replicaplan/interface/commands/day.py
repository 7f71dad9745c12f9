"""``replicaplan day``: the simulated day under the five policies, with the autoscaler's asks
around the 21:00 event."""

from __future__ import annotations

import argparse
import json

from replicaplan.core.example import EXAMPLE
from replicaplan.interface import options as opt


def add(sub) -> None:
    day = sub.add_parser(
        "day",
        help="the simulated day: the five scaling policies compared",
        description="Run the simulated day (the source's traffic) under five "
        "policies and print paid hours, uncovered and queued "
        "minutes, excess share and utilization.",
    )
    day.add_argument(
        "--mu-star",
        type=opt.positive,
        default=EXAMPLE.mu_star_rps,
        help="μ*: requests/s one replica serves within its promises, > 0 (default: %(default)s)",
    )
    day.add_argument(
        "--target",
        type=opt.share,
        default=EXAMPLE.target_utilization,
        help="ρ*: target utilization in (0, 1] (default: %(default)s)",
    )
    day.add_argument(
        "--startup",
        type=opt.whole(0, opt.MAX_STARTUP_MIN),
        default=EXAMPLE.startup_min,
        help=f"start-up time in whole minutes, 0 to {opt.MAX_STARTUP_MIN:,} (default: %(default)s)",
    )
    day.add_argument(
        "--reserve",
        type=opt.whole(0, opt.MAX_RESERVE),
        default=3,
        help=f"spare replicas of the reserve policy, 0 to {opt.MAX_RESERVE:,} "
        "(default: %(default)s)",
    )
    day.add_argument("--json", action="store_true", help="print JSON instead of the table")
    day.set_defaults(run=run)


def run(args: argparse.Namespace) -> str:
    from replicaplan.core.sizing import ReplicaRate
    from replicaplan.interface.report import event_request_line, policy_table_text
    from replicaplan.scenarios.studies import policy_table

    per = ReplicaRate(args.mu_star, args.target)  # each flag checked by its type
    rows = policy_table(
        replica_rate=per,
        startup_min=args.startup,
        spares=args.reserve,
    )
    if args.json:
        return json.dumps([{"policy": p.name, **r.summary()} for p, r in rows], indent=2)
    return policy_table_text(rows) + "\n\n" + event_request_line(replica_rate=per)

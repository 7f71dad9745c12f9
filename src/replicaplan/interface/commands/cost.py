"""``replicaplan cost``: the cost per token at a utilization, the price of idle capacity, and
whether spot instances pay off."""

from __future__ import annotations

import argparse
import json

from replicaplan.core.example import EXAMPLE
from replicaplan.interface import options as opt


def add(sub) -> None:
    cost = sub.add_parser(
        "cost",
        help="cost per token, idle capacity, spot instances",
        description="c = C_hour / (3600 nu rho); with --discount and --lost, the spot "
        "factor (1 - d)/(1 - omega).",
    )
    cost.add_argument(
        "--replica-price",
        type=opt.positive,
        default=EXAMPLE.price_per_replica_hour,
        help="price of one replica-hour, > 0 (default: %(default)s, the running example's)",
    )
    cost.add_argument(
        "--tokens-per-s",
        type=opt.positive,
        default=EXAMPLE.tokens_per_s,
        help="tokens/s a replica sustains within its SLOs, > 0 (default: %(default)s)",
    )
    cost.add_argument(
        "--utilization",
        type=opt.share,
        default=1.0,
        help="mean utilization rho in (0, 1] (default: %(default)s)",
    )
    cost.add_argument(
        "--discount", type=opt.number(0.0, 1.0, high_open=True), help="spot discount d in [0, 1)"
    )
    cost.add_argument(
        "--lost",
        type=opt.number(0.0, 1.0, high_open=True),
        help="share of spot work lost or redone, omega in [0, 1)",
    )
    cost.add_argument("--json", action="store_true", help="print JSON")
    cost.set_defaults(run=run)


def run(args: argparse.Namespace) -> str:
    from replicaplan.economics.cost import cost_per_token, spot_cost_factor, tokens_per_hour

    c = cost_per_token(args.replica_price, args.tokens_per_s, args.utilization)
    full = cost_per_token(args.replica_price, args.tokens_per_s, 1.0)
    out = {
        "price_per_replica_hour": args.replica_price,
        "tokens_per_s": args.tokens_per_s,
        "utilization": args.utilization,
        "tokens_per_hour": tokens_per_hour(args.tokens_per_s),
        "cost_per_million": c * 1e6,
        "cost_per_million_at_full_use": full * 1e6,
        "idle_capacity_factor": 1 / args.utilization,
    }
    if args.discount is not None or args.lost is not None:
        if args.discount is None or args.lost is None:
            raise ValueError("--discount and --lost go together (spot discount d and lost share ω)")
        factor = spot_cost_factor(args.discount, args.lost)
        out |= {
            "discount": args.discount,
            "lost_fraction": args.lost,
            "spot_factor": factor,
            "spot_cost_per_million": factor * c * 1e6,
            "spot_pays_off": factor < 1,
        }
    if args.json:
        return json.dumps(out, indent=2)
    lines = [
        f"{out['tokens_per_hour'] / 1e6:.2f} M tokens per replica-hour at full use",
        f"cost per million tokens: {out['cost_per_million']:.3f} at utilization "
        f"{args.utilization:g} ({out['cost_per_million_at_full_use']:.3f} at full use; "
        f"idle capacity multiplies it by {out['idle_capacity_factor']:.2f})",
    ]
    if "spot_factor" in out:
        verdict = (
            "pays off"
            if out["spot_pays_off"]
            else "never pays off: the lost share is at least the discount"
        )
        lines.append(
            f"spot: (1 - {args.discount:g}) / (1 - {args.lost:g}) = {out['spot_factor']:.3f} "
            f"of on-demand, {out['spot_cost_per_million']:.3f} per million; {verdict}"
        )
    return "\n".join(lines)

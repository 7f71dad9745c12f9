"""``replicaplan roofline``: MFU, MBU and the decode roofline of a model on a GPU."""

from __future__ import annotations

import argparse
import json

from replicaplan.core.example import EXAMPLE
from replicaplan.interface import options as opt
from replicaplan.serving.catalogue import MAX_COUNT


def add(sub) -> None:
    roof = sub.add_parser(
        "roofline",
        help="MFU, MBU and the decode roofline of a model on a GPU",
        description="Utilization figures of decoding: MFU, MBU, arithmetic intensity.",
    )
    count = opt.whole(1, MAX_COUNT)
    for flag, kind, default, what in (
        ("--params", opt.positive, EXAMPLE.params, "parameters, > 0"),
        ("--bytes-per-param", opt.positive, EXAMPLE.bytes_per_param, "bytes per weight, > 0"),
        ("--layers", count, EXAMPLE.layers, f"layers, 1 to {MAX_COUNT:,}"),
        ("--kv-heads", count, EXAMPLE.kv_heads, f"KV heads, 1 to {MAX_COUNT:,}"),
        ("--head-dim", count, EXAMPLE.head_dim, f"head size, 1 to {MAX_COUNT:,}"),
        ("--kv-bytes", opt.positive, 2.0, "bytes per cached value, > 0"),
        ("--batch", opt.whole(1, opt.MAX_BATCH), EXAMPLE.batch, "sequences per step"),
        ("--context", opt.positive, EXAMPLE.context_tokens, "context tokens per sequence, > 0"),
        ("--tpot", opt.positive, EXAMPLE.tpot_s, "seconds per decode step, > 0"),
        ("--peak-flops", opt.positive, EXAMPLE.peak_flops, "the GPU's FLOP/s, > 0"),
        ("--peak-bandwidth", opt.positive, EXAMPLE.peak_bandwidth, "its bytes/s, > 0"),
    ):
        roof.add_argument(flag, type=kind, default=default, help=f"{what} (default: {default:g})")
    roof.add_argument("--json", action="store_true", help="print JSON")
    roof.set_defaults(run=run)


def run(args: argparse.Namespace) -> str:
    from replicaplan.serving import roofline as rf

    weight_bytes = args.params * args.bytes_per_param
    m_kv = rf.kv_bytes_per_token(args.layers, args.kv_heads, args.head_dim, args.kv_bytes)
    kv_total = args.batch * args.context * m_kv
    out = {
        "kv_bytes_per_token": m_kv,
        "mfu": rf.mfu(args.params, args.batch / args.tpot, args.peak_flops),
        "mbu_weights_only": rf.mbu(weight_bytes, 0.0, args.tpot, args.peak_bandwidth),
        "mbu": rf.mbu(weight_bytes, kv_total, args.tpot, args.peak_bandwidth),
        "decode_intensity": rf.decode_intensity(
            args.params, args.batch, args.context, m_kv, weight_bytes
        ),
        "intensity_limit": rf.intensity_limit(args.params, args.context, m_kv),
        "ridge": rf.ridge(args.peak_flops, args.peak_bandwidth),
        "ridge_context": rf.ridge_context(args.params, m_kv, args.peak_flops, args.peak_bandwidth),
    }
    out["decode_mfu_ceiling"] = rf.decode_mfu_ceiling(
        args.params, args.context, m_kv, args.peak_flops, args.peak_bandwidth
    )
    if args.json:
        return json.dumps(out, indent=2)
    return "\n".join(
        [
            f"KV cache: {m_kv / 1024:g} KiB per token; {kv_total / 1e9:.1f} GB for "
            f"{args.batch} x {args.context:g} tokens",
            f"MFU {out['mfu']:.1%} at {args.batch / args.tpot:,.0f} tokens/s",
            f"MBU {out['mbu']:.1%} ({out['mbu_weights_only']:.1%} from the weights alone)",
            f"decode intensity {out['decode_intensity']:.1f} FLOP/byte; "
            f"limit {out['intensity_limit']:.1f}; "
            f"ridge {out['ridge']:.0f}",
            f"decode MFU ceiling {out['decode_mfu_ceiling']:.1%}; "
            "batching reaches the ridge only below "
            f"{out['ridge_context']:.0f} tokens of context",
        ]
    )

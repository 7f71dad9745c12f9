"""``replicaplan plan``: a fleet for a reader's own traffic: μ* on the log's mix, L*, the book's
policies replayed and priced, and the HPA, KEDA object and adapter rule that hold the target."""

from __future__ import annotations

import argparse
import json

from replicaplan.interface import options as opt
from replicaplan.interface.commands import fleet
from replicaplan.serving.catalogue import DTYPE_BYTES


def add(sub) -> None:
    pl = sub.add_parser(
        "plan",
        help="a fleet for your own traffic: mu*, L*, the policies priced, an HPA and KEDA object",
        description="Reads a request log with the Azure trace's columns (TIMESTAMP, "
        "ContextTokens, GeneratedTokens) in time order, or a per-minute rate series (minute, "
        "rate_rps); measures mu* of the replica on the log's length mix and the concurrency "
        "target L* = rho* mu* W; replays the traffic under the book's policies, priced per "
        "token; writes an autoscaling/v2 HPA and a KEDA ScaledObject.",
    )
    fleet.add_traffic(pl)
    fleet.add_replica(pl)
    pl.add_argument(
        "--kv-dtype",
        choices=tuple(DTYPE_BYTES),
        default=None,
        help="the KV cache's type (default: the weights')",
    )
    pl.add_argument(
        "--token-budget",
        type=opt.whole(1, opt.MAX_TOKEN_BUDGET),
        default=None,
        help=f"tokens one step carries (max_num_batched_tokens), the batch cap to "
        f"{opt.MAX_TOKEN_BUDGET:,} (default: vLLM V1's for the card, 8192 on an H100 or H200 "
        "and 2048 elsewhere, or the batch cap if larger)",
    )
    pl.add_argument(
        "--prefill",
        choices=("chunked", "separate"),
        default="chunked",
        help="prompts chunked into the decode steps (vLLM V1's default) or run as separate "
        "passes (default: chunked)",
    )
    pl.add_argument(
        "--tpot-point",
        action="append",
        type=opt.point(3, "batch, context tokens per sequence, seconds"),
        metavar="B,CONTEXT,S",
        help="a measured decode step: batch, context tokens per sequence, seconds (2 or more)",
    )
    pl.add_argument(
        "--ttft-point",
        action="append",
        type=opt.point(2, "prompt tokens, seconds"),
        metavar="PROMPT,S",
        help="a measured TTFT on an idle server: prompt tokens, seconds (2 or more)",
    )
    price = pl.add_mutually_exclusive_group()
    price.add_argument(
        "--gpu-price",
        type=opt.positive,
        default=None,
        help="price of one GPU-hour, > 0; a replica pays it for each of its --gpus (default: "
        "the GPU's on-demand list price in the catalogue; the running example's 2)",
    )
    price.add_argument(
        "--replica-price",
        type=opt.positive,
        default=None,
        help="price of one replica-hour, > 0, all its GPUs together (instead of --gpu-price)",
    )
    fleet.add_fleet_options(pl)
    pl.add_argument(
        "--deployment",
        metavar="FILE",
        help="also write the engine's Deployment (vLLM's OpenAI server with the plan's replica: "
        "its GPUs, batch, token budget, context, probes from --startup) and the PodMonitor "
        "that scrapes it, as one YAML file; needs --model (a catalogue name) and --engine vllm",
    )
    pl.add_argument(
        "--image",
        type=opt.image,
        default=None,
        help="the engine's container image for --deployment (default: vllm/vllm-openai:latest; "
        "pin a release)",
    )
    pl.add_argument(
        "--replica",
        help="a replica file written by `replicaplan fit` (instead of --model/--gpu/timings)",
    )
    pl.set_defaults(run=run)


def run(args: argparse.Namespace) -> str:
    from replicaplan.interface.files import FolderLocks

    outputs = fleet.checked_inputs(args)
    size = fleet.sizing(args)  # before any work: a ceiling under the floor is refused here
    with FolderLocks(outputs):  # one run at a time writes into a folder
        result = _run(args, outputs, size)
    fleet.served_model_note(args)  # once the objects are written, beside them
    return result


def _run(args: argparse.Namespace, outputs: dict, size) -> str:
    from replicaplan.interface.plan_report import text
    from replicaplan.serving.catalogue import gpu_hour_price

    model = fleet.replica(args)
    price = args.gpu_price
    if args.replica_price is not None:
        price = gpu_hour_price(args.replica_price, model.gpus)
    if price is None and model.price_per_gpu_hour is None:
        raise ValueError(
            "--gpu-price or --replica-price is required: the replica's GPU has no list price in "
            "the catalogue (a GPU spelled out without price_per_gpu_hour, or timings fitted "
            "without --gpu)"
        )
    log, lengths = fleet.traffic(args)
    p = fleet.plan_of(args, log, lengths, model, price, size)
    served, objects = None, ()
    if args.deployment:
        from replicaplan.planner.server import DEFAULT_IMAGE, workload

        served, objects = workload(
            model,
            fleet.hardware("model", args.model),
            lengths or log,
            name=args.name,
            namespace=args.namespace,
            served_model=args.served_model or args.name,
            replicas=p.min_replicas,
            startup=fleet.startup(args),
            image=args.image or DEFAULT_IMAGE,
        )
    # everything is computed; only now is anything written
    written = fleet.write(args, p, outputs, deployment=objects)
    if args.json:
        out = fleet.plan_json(args, p, log)
        return json.dumps({**out, "server_command": served} if served else out, indent=2)
    line = f"\nthe engine: {served}" if served else ""
    return text(p, log=fleet.source_name(args)) + line + fleet.written(written)

"""``replicaplan fit``: a replica fitted to the operator's own benchmark run (vLLM's
``bench serve`` result or a GuideLLM report), printed with its standard errors and saved for
``plan --replica`` and ``search --replica``."""

from __future__ import annotations

import argparse
from pathlib import Path

from replicaplan.interface.commands import fleet


def add(sub) -> None:
    fi = sub.add_parser(
        "fit",
        help="a replica fitted to your own benchmark run (vLLM's or GuideLLM's result file)",
        description="Reads the result of `vllm bench serve --save-result --save-detailed` or a "
        "GuideLLM report, replays its requests through the replica of --model on --gpu under "
        "the same load, and fits the step's floor, time per sequence, bandwidth and FLOP/s to "
        "its TTFT and TPOT percentiles; prints each with its standard error and the residual, "
        "and writes the replica file `plan --replica` reads.",
    )
    fi.add_argument("--bench", required=True, help="the benchmark's result file (JSON)")
    fleet.add_replica(fi, required=True)
    fi.add_argument("--out", help="write the fitted replica here (JSON)")
    fi.set_defaults(run=run)


def run(args: argparse.Namespace) -> str:
    from replicaplan.interface.files import Staging, check_writable
    from replicaplan.serving.replica import ReplicaModel
    from replicaplan.simulation import benchfit

    shape = fleet.hardware("model", args.model)
    card = fleet.hardware("gpu", args.gpu)
    gpus = args.gpus or 1
    if not Path(args.bench).is_file():
        raise ValueError(f"--bench: no such file: {args.bench}")
    if args.out:  # before the fit, not after
        if Path(args.out).resolve() == Path(args.bench).resolve():
            raise ValueError(f"--out: {args.out} is the --bench input; give another path")
        check_writable(args.out, "--out")
    bench = benchfit.read_bench(args.bench)
    benchfit.check_model(bench, shape)
    start = ReplicaModel.from_hardware(shape, card, gpus=gpus, batch=args.batch, dtype=args.dtype)
    fitted = benchfit.fit(bench, start)
    lines = [
        f"{Path(args.bench).name}: {bench.prompt.size} requests, "
        + (
            f"{bench.concurrency} in flight"
            if bench.concurrency
            else ("sent at once" if bench.rate == float("inf") else f"{bench.rate:g} req/s")
        ),
        f"replica: {shape.name} on {gpus} × {card.name}, batch {start.batch}, "
        f"budget {start.token_budget}",
        "fitted step (value ± standard error):",
    ]
    units = {
        "step_floor_s": (1e3, "ms floor t_0"),
        "seq_step_s": (1e6, "µs per sequence t_seq"),
        "bandwidth": (1e-12, "TB/s achieved bandwidth B_ach"),
        "prefill_flops": (1e-12, "TFLOP/s achieved F_ach"),
    }
    for name, (value, err) in fitted.params.items():
        scale, label = units[name]
        lines.append(f"  {value * scale:10.4g} ± {err * scale:.2g} {label}")
    lines.append(f"residual: {fitted.residual:.4f} (rms of log fitted/measured percentiles)")
    lines.append(f"{'':10}{'measured':>10}{'fitted':>10}")
    for key, measured in fitted.measured.items():
        lines.append(f"{key:10}{measured * 1e3:9.1f}ms{fitted.fitted[key] * 1e3:8.1f}ms")
    if args.out:
        calibrated = benchfit.calibration(fitted.model, card, gpus, args.dtype or shape.dtype)
        with Staging() as out:
            out.file(args.out, benchfit.save(fitted, args.out, calibrated) + "\n")
        lines.append(f"written: {args.out} (replicaplan plan --replica {args.out})")
    return "\n".join(lines)

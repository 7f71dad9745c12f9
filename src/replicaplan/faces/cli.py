"""The ``replicaplan`` command: the book's analyses on a reader's own numbers.

replicaplan day [--mu-star 8] [--target 0.8] [--startup 8] [--reserve 3] [--json]
replicaplan capacity [--model replica|mm1] [--rates 1:10:0.5] [--quota 0.9] [--json] ...
replicaplan cost [--replica-price 2] [--tokens-per-s 2560] [--utilization 0.36] [--discount 0.6 --lost 0.1]
replicaplan roofline [--params 8e9] [--batch 64] [--context 2000] [--tpot 0.025] ...
replicaplan plan --log requests.csv | --rates minutes.csv [--model … --gpu …] [--report DIR] ...
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from replicaplan.autoscalers.engines import ENGINES  # names only: imports no model
from replicaplan.core.example import EXAMPLE


def _day(args: argparse.Namespace) -> str:
    from replicaplan.faces.report import event_request_line, policy_table_text
    from replicaplan.simulation.day import policy_table

    rows = policy_table(
        mu_star_rps=args.mu_star, target=args.target, startup_min=args.startup, spares=args.reserve
    )
    if args.json:
        return json.dumps([{"policy": p.name, **r.summary()} for p, r in rows], indent=2)
    return (
        policy_table_text(rows)
        + "\n\n"
        + event_request_line(mu_star_rps=args.mu_star, target=args.target)
    )


def _fraction_arg(option: str):
    """An argparse type: a number in (0, 1), refused by the option's name."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"{option} must be a number in (0, 1), got {text!r}")
        return value

    return parse


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
            f"rates must look like 1:10:0.5 or 2,4,6 (with step > 0), got {text!r}"
        ) from None


def _capacity(args: argparse.Namespace) -> str:
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
            args.rates or _grid("1:10:0.5"),
            mix=args.mix,
            n_requests=args.requests,
            quota=args.quota,
            ttft_slo_s=args.ttft_slo,
            tpot_slo_s=args.tpot_slo,
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


def _cost(args: argparse.Namespace) -> str:
    from replicaplan.economics.cost import cost_per_token, spot_cost_factor, tokens_per_hour

    c = cost_per_token(args.price, args.tokens_per_s, args.utilization)
    full = cost_per_token(args.price, args.tokens_per_s, 1.0)
    out = {
        "price_per_replica_hour": args.price,
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


def _roofline(args: argparse.Namespace) -> str:
    from replicaplan.core import _check
    from replicaplan.serving import roofline as rf

    _check.integer("batch", args.batch, minimum=1)
    _check.positive("tpot", args.tpot)
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


def _hardware(kind: str, text: str):
    """``replica.from_text``, its errors named by the option (``--gpu: …``)."""
    from replicaplan.serving.catalogue import from_text

    try:
        return from_text(kind, text)
    except ValueError as err:
        raise ValueError(f"--{err}") from None


MAX_GPUS = 64
"""The most GPUs a replica may span (--gpus): a tensor-parallel group is at most a few nodes."""
MAX_BATCH = 16_384
"""The largest batch cap --batch takes; the replica's state grows with it."""
MAX_TOKEN_BUDGET = 1_048_576
"""The largest --token-budget: a step of a million tokens is far past any GPU's."""


def _replica(args: argparse.Namespace):
    """The replica the plan sizes (``_base_replica``) with its scheduler's options applied:
    --token-budget and --prefill."""
    from dataclasses import replace

    budget = args.token_budget
    if budget is not None and not 1 <= budget <= MAX_TOKEN_BUDGET:
        raise ValueError(
            f"--token-budget must be an integer from 1 to {MAX_TOKEN_BUDGET:,}, got {budget}"
        )
    model = _base_replica(args)
    changes = {"chunked_prefill": args.prefill == "chunked"}
    if budget is not None:
        changes["token_budget"] = budget
    try:
        return replace(model, **changes)
    except ValueError as err:
        raise ValueError(f"--token-budget: {err}") from None


def _base_replica(args: argparse.Namespace):
    """The replica the plan sizes: the running example, a datasheet, or a fit to measurements."""
    from dataclasses import replace

    from replicaplan.serving.catalogue import DEFAULT_BATCH, TOKEN_BUDGET, engine_defaults
    from replicaplan.serving.replica import ReplicaModel

    for option, value, top in (("--gpus", args.gpus, MAX_GPUS), ("--batch", args.batch, MAX_BATCH)):
        if value is not None and not 1 <= value <= top:
            raise ValueError(f"{option} must be an integer from 1 to {top:,}, got {value}")
    fitting = bool(args.tpot_point or args.ttft_point)
    if getattr(args, "replica", None):
        given = [
            flag
            for flag, value in (
                ("--model", args.model),
                ("--gpu", args.gpu),
                ("--gpus", args.gpus),
                ("--batch", args.batch),
                ("--dtype", getattr(args, "dtype", None)),
                ("--tpot-point", args.tpot_point),
                ("--ttft-point", args.ttft_point),
            )
            if value
        ]
        if given:
            raise ValueError(f"--replica carries the whole replica: drop {', '.join(given)}")
        from replicaplan.simulation import benchfit

        try:
            return benchfit.load(args.replica)
        except ValueError as err:
            raise ValueError(f"--replica: {err}") from None
    if not (args.model or args.gpu or fitting):
        if args.gpus not in (None, 1):
            raise ValueError("--gpus needs --model and --gpu: the running example is one GPU")
        if args.batch is None:
            return ReplicaModel()
        # the example's replica with another batch cap; the token budget at least the batch
        return replace(ReplicaModel(), batch=args.batch, token_budget=max(TOKEN_BUDGET, args.batch))
    args.gpus = args.gpus or 1
    if not args.model:
        raise ValueError("--model is required with --gpu, --tpot-point or --ttft-point")
    shape = _hardware("model", args.model)
    if not (args.gpu or fitting):
        raise ValueError("--gpu is required with --model (or measured --tpot/--ttft-point)")
    card = _hardware("gpu", args.gpu) if args.gpu else None
    dtypes = {"dtype": getattr(args, "dtype", None), "kv_dtype": getattr(args, "kv_dtype", None)}
    if (dtypes["dtype"] or dtypes["kv_dtype"]) and not card:
        raise ValueError("--dtype and --kv-dtype need --gpu: a fit measures the server as it ran")
    try:
        sheet = card and ReplicaModel.from_hardware(
            shape, card, gpus=args.gpus, batch=args.batch, **dtypes
        )
    except ValueError as err:  # the GPUs that cannot hold or split the model: named by flag
        if str(err).startswith("gpus:"):
            raise ValueError(f"--{err}") from None
        raise
    # vLLM V1's defaults for the card, as ReplicaModel.from_hardware takes them
    args.batch = args.batch or (engine_defaults(card)[0] if card else DEFAULT_BATCH)
    if not fitting:
        return sheet
    tpot = [_numbers("--tpot-point", x, 3) for x in args.tpot_point or []]
    ttft = [_numbers("--ttft-point", x, 2) for x in args.ttft_point or []]
    # timings from the measurements; the cache from the GPU's memory when --gpu is given
    # (and the price of its GPUs)
    memory = (
        {
            "kv_capacity_tokens": sheet.kv_capacity_tokens,
            "gpus": sheet.gpus,
            "price_per_gpu_hour": sheet.price_per_gpu_hour,
            "currency": sheet.currency,
        }
        if sheet
        else {}
    )
    fitted, notes = ReplicaModel.fit_notes(
        shape,
        tpot=tpot,
        ttft=ttft,
        batch=args.batch,
        token_budget=max(TOKEN_BUDGET, args.batch),
        **memory,
    )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return fitted


def _numbers(option: str, text: str, n: int) -> tuple:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != n:
        raise ValueError(f"{option}: expected {n} comma-separated numbers, got {text!r}")
    return values


def _progress(share: float, doing: str = "reading the log") -> None:
    """A progress bar on the terminal's standard error (a long log read, a search screened)."""
    bar = "#" * int(30 * share)
    print(f"\r{doing} [{bar:<30}] {100 * share:5.1f} %", end="", file=sys.stderr)
    if share >= 1:
        print(file=sys.stderr)


INT32_MAX = 2**31 - 1
"""The largest replica count the Kubernetes API takes (``maxReplicas`` is an int32)."""
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
"""A namespace's name: an RFC 1123 label, as the API server validates it."""


def _checked_inputs(args: argparse.Namespace) -> dict:
    """Everything about the command's files and names that can be refused before any work:
    the inputs exist, each output has its own path in a folder that takes files, the report
    directory is free, the names and address are ones Kubernetes and Prometheus accept, the
    budget is a share. Returns the outputs asked for, by option."""
    from replicaplan.autoscalers.manifest import check_names, check_prometheus
    from replicaplan.faces.files import check_writable
    from replicaplan.faces.plan_report import check_report_dir

    inputs = (
        ("--log", args.log),
        ("--rates", args.rates),
        ("--lengths", args.lengths),
        ("--replica", getattr(args, "replica", None)),
    )
    for option, value in inputs:
        if value and not Path(value).is_file():
            raise ValueError(f"{option}: no such file: {value}")
    if args.log and args.lengths:
        raise ValueError(
            "--lengths: a log carries its own lengths; give --lengths with --rates only"
        )
    read = {Path(value).resolve(): option for option, value in inputs if value}
    outputs = {
        "--manifest": args.manifest,
        "--keda": args.keda,
        "--adapter": args.adapter,
        "--report": args.report,
    }
    outputs = {option: path for option, path in outputs.items() if path}
    if len({Path(path).resolve() for path in outputs.values()}) < len(outputs):
        raise ValueError(f"{', '.join(outputs)}: each output needs its own path")
    for option, path in outputs.items():  # before minutes of work, not after
        if Path(path).resolve() in read:
            source = read[Path(path).resolve()]
            raise ValueError(f"{option}: {path} is the {source} input; give another path")
        check_writable(path, option)
    if args.report:
        try:
            check_report_dir(args.report)
        except ValueError as err:
            raise ValueError(f"--report: {err}") from None
    check_names(args.name, args.metric or "requests_in_flight")
    try:
        check_prometheus(args.prometheus)
    except ValueError as err:
        raise ValueError(f"--{err}") from None
    if args.short_budget is not None and not 0 <= args.short_budget < 1:
        raise ValueError(f"--short-budget must be from 0 to below 1, got {args.short_budget:g}")
    if args.max_replicas is not None and not 1 <= args.max_replicas <= INT32_MAX:
        raise ValueError(
            f"--max-replicas must be an integer from 1 to {INT32_MAX:,} (the API's int32), "
            f"got {args.max_replicas}"
        )
    if not _DNS_LABEL.fullmatch(args.namespace or ""):
        raise ValueError(
            "--namespace must be a DNS-1123 label (lower-case letters, digits and '-', at most "
            f"63 characters, a letter or digit at each end), got {args.namespace!r}"
        )
    return outputs


def _traffic(args: argparse.Namespace):
    """The log (with a progress bar on a terminal) or the rate series, and the length mix."""
    from replicaplan.traffic.loadgen import read_rate_series, read_trace

    progress = _progress if sys.stderr.isatty() else None
    if args.log:
        traffic = read_trace(args.log, progress=progress)
    else:
        traffic = read_rate_series(args.rates)
    lengths = read_trace(args.lengths) if args.lengths else None
    return traffic, lengths


def _plan_of(args: argparse.Namespace, traffic, lengths, model, price):
    """``plan.plan`` with the command's options: the one call both commands make."""
    from replicaplan.planner.plan import plan

    try:
        return plan(
            traffic,
            model,
            lengths=lengths,
            target_utilization=args.target,
            ttft_slo_s=args.ttft_slo,
            tpot_slo_s=args.tpot_slo,
            quota=args.quota,
            startup_min=args.startup,
            short_budget=args.short_budget,
            max_replicas=args.max_replicas,
            price_per_gpu_hour=price,
            name=args.name,
            metric_name=args.metric,
            prometheus=args.prometheus,
            engine=args.engine,
            namespace=args.namespace,
            served_model=args.served_model,
            sensitivity=bool(args.report),
            precision=args.precision,
            signal=args.signal,
        )
    except ValueError as err:  # the one bound that depends on the log: named by its flag
        if str(err).startswith("max_replicas"):
            raise ValueError(str(err).replace("max_replicas", "--max-replicas", 1)) from None
        raise


def _write(args: argparse.Namespace, p, outputs: dict, extra=None) -> list[str]:
    """Every output staged beside its target, then all renamed into place (``files.Staging``);
    ``extra(folder)`` adds files to the report's folder."""
    from replicaplan.autoscalers.manifest import to_yaml
    from replicaplan.faces.files import Staging
    from replicaplan.faces.plan_report import fill_report

    source = Path(args.log or args.rates)
    with Staging() as out:
        for option, obj in (("--manifest", p.hpa), ("--keda", p.keda), ("--adapter", p.adapter)):
            if option in outputs:
                out.file(outputs[option], to_yaml(obj))
        if args.report:
            folder = out.directory(args.report)
            fill_report(p, folder, fmt=args.report_format, log=source.name)
            if extra is not None:
                extra(folder)
    return list(outputs.values())


def _fit(args: argparse.Namespace) -> str:
    """``replicaplan fit``: a replica fitted to a benchmark run, printed and saved."""
    from replicaplan.faces.files import Staging
    from replicaplan.serving.replica import ReplicaModel
    from replicaplan.simulation import benchfit

    for option, value, top in (("--gpus", args.gpus, MAX_GPUS), ("--batch", args.batch, MAX_BATCH)):
        if value is not None and not 1 <= value <= top:
            raise ValueError(f"{option} must be an integer from 1 to {top:,}, got {value}")
    shape = _hardware("model", args.model)
    card = _hardware("gpu", args.gpu)
    if args.out:  # before the fit, not after
        from replicaplan.faces.files import check_writable

        if Path(args.out).resolve() == Path(args.bench).resolve():
            raise ValueError(f"--out: {args.out} is the --bench input; give another path")
        check_writable(args.out, "--out")
    bench = benchfit.read_bench(args.bench)
    benchfit.check_model(bench, shape)
    start = ReplicaModel.from_hardware(
        shape, card, gpus=args.gpus or 1, batch=args.batch, dtype=args.dtype
    )
    fitted = benchfit.fit(bench, start)
    lines = [
        f"{Path(args.bench).name}: {bench.prompt.size} requests, "
        + (
            f"{bench.concurrency} in flight"
            if bench.concurrency
            else ("sent at once" if bench.rate == float("inf") else f"{bench.rate:g} req/s")
        ),
        f"replica: {shape.name} on {args.gpus or 1} × {card.name}, batch {start.batch}, "
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
        calibrated = benchfit.calibration(
            fitted.model, card, args.gpus or 1, args.dtype or shape.dtype
        )
        with Staging() as out:
            out.file(args.out, benchfit.save(fitted, args.out, calibrated) + "\n")
        lines.append(f"written: {args.out} (replicaplan plan --replica {args.out})")
    return "\n".join(lines)


def _plan(args: argparse.Namespace) -> str:
    from replicaplan.faces.plan_report import text

    outputs = _checked_inputs(args)
    model = _replica(args)
    if args.price is not None and not args.price > 0:
        raise ValueError(f"--price must be > 0, got {args.price:g}")
    if args.price is None and model.price_per_gpu_hour is None:
        raise ValueError(
            "--price is required: the replica's GPU has no list price in the catalogue "
            "(a GPU spelled out without price_per_replica_hour, or timings fitted without --gpu)"
        )
    traffic, lengths = _traffic(args)
    p = _plan_of(args, traffic, lengths, model, args.price)
    # everything is computed; only now is anything written
    written = _write(args, p, outputs)
    if args.json:
        return json.dumps(_plan_json(args, p, traffic), indent=2)
    return text(p, log=Path(args.log or args.rates).name) + _written(written)


def _plan_json(args: argparse.Namespace, p, traffic) -> dict:
    """The plan's JSON as both commands print it: the log's path and, for a log, its requests."""
    from replicaplan.faces.plan_report import summary

    requests = {"requests": int(traffic.prompt.size)} if args.log else {}
    return summary(p, log=str(Path(args.log or args.rates)), **requests)


def _written(paths) -> str:
    return "".join(f"\n(written to {w})" for w in paths)


def _listed(option: str, text: str, kind, allowed=None, top: int | None = None) -> list:
    """A comma-separated grid option's values, each checked: a name among ``allowed``, or an
    integer from 1 to ``top``."""
    values = [v.strip() for v in str(text).split(",") if v.strip()]
    if not values:
        raise ValueError(f"{option} must name at least one value")
    out = []
    for v in values:
        if kind is int:
            try:
                n = int(v)
            except ValueError:
                n = 0
            if not 1 <= n <= top:
                raise ValueError(f"{option}: {v!r} is not an integer from 1 to {top:,}")
            out.append(n)
        else:
            if v not in allowed:
                raise ValueError(f"{option}: unknown {v!r}; known: {', '.join(sorted(allowed))}")
            out.append(v)
    return list(dict.fromkeys(out))


def _prices(texts) -> tuple:
    """--price GPU=PRICE pairs."""
    from replicaplan.serving.catalogue import GPUS

    out = {}
    for text in texts or []:
        gpu, _, value = str(text).partition("=")
        if gpu not in GPUS:
            raise ValueError(
                f"--price: expected GPU=PRICE with a GPU of the catalogue, got {text!r}"
            )
        try:
            price = float(value)
        except ValueError:
            price = math.nan
        if not (math.isfinite(price) and price > 0):
            raise ValueError(f"--price: the price of {gpu} must be a number > 0, got {value!r}")
        out[gpu] = price
    return tuple(sorted(out.items()))


def _search(args: argparse.Namespace):
    from replicaplan.faces import search_report
    from replicaplan.faces.plan_report import text as plan_text
    from replicaplan.planner import search as searching
    from replicaplan.serving.catalogue import GPUS

    outputs = _checked_inputs(args)
    shape = _hardware("model", args.model)
    candidates = searching.grid(
        _listed("--gpu-grid", args.gpu_grid, str, [g for g in GPUS if g != "example"]),
        _listed("--gpus-grid", args.gpus_grid, int, top=MAX_GPUS),
        _listed("--batch-grid", args.batch_grid, int, top=MAX_BATCH),
        _listed("--budget-grid", args.budget_grid, int, top=MAX_TOKEN_BUDGET),
        [
            p == "chunked"
            for p in _listed("--prefill-grid", args.prefill_grid, str, ("chunked", "separate"))
        ],
    )
    if not 200 <= args.requests <= 100_000:
        raise ValueError(f"--requests must be an integer from 200 to 100,000, got {args.requests}")
    if args.jobs is not None and not 1 <= args.jobs <= 1024:
        raise ValueError(f"--jobs must be an integer from 1 to 1,024, got {args.jobs}")
    calibrated = ()
    if args.replica:
        from replicaplan.simulation import benchfit

        try:
            calibrated = tuple(sorted(benchfit.read_calibration(args.replica).items()))
        except ValueError as err:
            raise ValueError(f"--replica: {err}") from None
    settings = searching.Settings(
        calibration=calibrated,
        ttft_slo_s=args.ttft_slo,
        tpot_slo_s=args.tpot_slo,
        quota=args.quota,
        target_utilization=args.target,
        startup_min=args.startup,
        short_budget=args.short_budget,
        prices=_prices(args.price),
        n_requests=args.requests,
    )
    client = None
    if args.dask:
        try:
            from distributed import Client

            client = Client(args.dask, timeout="5s")
        except (OSError, TimeoutError) as err:
            raise ValueError(f"--dask: cannot reach the scheduler at {args.dask} ({err})") from None
    traffic, lengths = _traffic(args)
    progress = (lambda share: _progress(share, "screening")) if sys.stderr.isatty() else None
    try:
        result = searching.search(
            traffic,
            shape,
            candidates,
            lengths=lengths,
            settings=settings,
            jobs=args.jobs,
            dask=client,
            progress=progress,
        )
    finally:
        if client is not None:
            client.close()
    if result.best is None:
        return search_report.text(result) + "\nnothing written", 2
    best = result.best
    p = _plan_of(
        args,
        traffic,
        lengths,
        best.candidate.replica(shape, settings.calibration),
        settings.price(best.candidate.gpu),
    )

    def add_search(folder: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from replicaplan.faces.plots import plot_search

        fig = plot_search(result.outcomes, best, currency=p.currency)
        fig.savefig(folder / "pareto.png", dpi=120)
        plt.close(fig)
        (folder / "search.md").write_text(search_report.markdown(result), encoding="utf-8")

    written = _write(args, p, outputs, extra=add_search)
    if args.json:
        plan_json = _plan_json(args, p, traffic)
        return json.dumps({**search_report.summary(result), "plan": plan_json}, indent=2)
    log = Path(args.log or args.rates).name
    return (
        search_report.text(result) + "\n\nits plan:\n" + plan_text(p, log=log) + _written(written)
    )


def _add_promises(parser: argparse.ArgumentParser) -> None:
    """The promises a replica is sized against, spelled the same in every command."""
    parser.add_argument(
        "--quota",
        type=float,
        default=EXAMPLE.quota,
        help="required share, in (0, 1) (default: %(default)s)",
    )
    parser.add_argument(
        "--ttft-slo",
        type=float,
        default=EXAMPLE.ttft_slo_s,
        help="TTFT SLO, s (default: %(default)s)",
    )
    parser.add_argument(
        "--tpot-slo",
        type=float,
        default=EXAMPLE.tpot_slo_s,
        help="TPOT SLO, s (default: %(default)s)",
    )


def _add_traffic(parser: argparse.ArgumentParser) -> None:
    traffic = parser.add_mutually_exclusive_group(required=True)
    traffic.add_argument(
        "--log", help="log (CSV, gzip or Parquet): TIMESTAMP, ContextTokens, GeneratedTokens"
    )
    traffic.add_argument("--rates", help="CSV per-minute series (minute, rate_rps)")
    parser.add_argument(
        "--lengths", help="request log whose length mix to use with --rates (default: Azure conv)"
    )


def _add_fleet_options(parser: argparse.ArgumentParser) -> None:
    """What ``plan`` and ``search`` share: the promises and target, the start-up, the budget,
    the deployment's names, and the outputs."""
    parser.add_argument(
        "--signal",
        choices=("completion_rate", "concurrency", "kv_tokens"),
        default="completion_rate",
        help="what the autoscaler holds per replica: requests completed a second against "
        "rho* mu* (default; the engine's request counter, which leaves a backlog out), requests "
        "in flight against L*, or the tokens held in the KV cache",
    )
    parser.add_argument(
        "--precision",
        type=_fraction_arg("--precision"),
        default=0.02,
        help="relative standard error of mu* the plan measures it to, with independent "
        "replications, in (0, 1) (default: 0.02; at least 5 and at most 12 replications)",
    )
    parser.add_argument("--target", type=float, default=EXAMPLE.target_utilization, help="rho*")
    _add_promises(parser)
    parser.add_argument(
        "--startup", type=int, default=EXAMPLE.startup_min, help="start-up time, whole minutes"
    )
    parser.add_argument(
        "--short-budget",
        type=float,
        default=None,
        metavar="SHARE",
        help="share of requests the recommended policy may leave beyond capacity, from 0 to "
        "below 1 (default: a tenth of 1 - quota, 0.01 for the 90%% quota; 0 demands every "
        "minute covered)",
    )
    parser.add_argument(
        "--max-replicas",
        type=int,
        default=None,
        metavar="N",
        help="the manifests' maxReplicas, at least the quietest minute's fleet (default: twice "
        "the busiest minute's fleet, a safety margin)",
    )
    parser.add_argument("--name", default="llm", help="name of the HPA and of its Deployment")
    parser.add_argument(
        "--metric",
        default=None,
        help="name of the per-pod metric the manifests scale on (default: requests_per_second; "
        "requests_in_flight or kv_cache_tokens with --signal)",
    )
    parser.add_argument(
        "--prometheus",
        default="http://prometheus.monitoring.svc:9090",
        help="Prometheus address for the KEDA trigger",
    )
    parser.add_argument(
        "--engine",
        default="vllm",
        choices=sorted(ENGINES),
        help="the serving engine whose metrics the KEDA query and the adapter rule read",
    )
    parser.add_argument("--namespace", default="default", help="the deployment's namespace")
    parser.add_argument(
        "--served-model",
        default=None,
        help="the engine's model_name label (default: --name)",
    )
    parser.add_argument(
        "--adapter", help="also write the prometheus-adapter rule for the HPA's metric (YAML)"
    )
    parser.add_argument("--manifest", help="also write the HPA as YAML to this file")
    parser.add_argument("--keda", help="also write the KEDA ScaledObject as YAML to this file")
    parser.add_argument("--report", help="also write a report with its figures into this directory")
    parser.add_argument(
        "--report-format", choices=("md", "html"), default="md", help="report format"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="replicaplan",
        description="How many replicas to keep on, and what that capacity costs.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    day = sub.add_parser(
        "day",
        help="the simulated day: the five scaling policies compared",
        description="Run the simulated day (the source's traffic) under five "
        "policies and print paid hours, uncovered and queued "
        "minutes, excess share and utilization.",
    )
    day.add_argument(
        "--mu-star",
        type=float,
        default=EXAMPLE.mu_star_rps,
        help="μ*: requests/s one replica serves within its SLOs (default: %(default)s)",
    )
    day.add_argument(
        "--target",
        type=float,
        default=EXAMPLE.target_utilization,
        help="ρ*: target utilization in (0, 1] (default: %(default)s)",
    )
    day.add_argument(
        "--startup",
        type=int,
        default=EXAMPLE.startup_min,
        help="start-up time in whole minutes (default: %(default)s)",
    )
    day.add_argument(
        "--reserve",
        type=int,
        default=3,
        help="spare replicas of the reserve policy (default: %(default)s)",
    )
    day.add_argument("--json", action="store_true", help="print JSON instead of the table")
    day.set_defaults(run=_day)

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
    cap.add_argument("--mu", type=float, help="M/M/1 service rate, req/s")
    cap.add_argument("--tau", type=float, help="M/M/1 residence-time threshold, s")
    cap.add_argument(
        "--rates",
        type=_grid,
        default=None,
        help="grid of rates that brackets mu*: start:stop:step or a,b,c "
        "(default: 1:10:0.5 for the replica, mu/20 to mu in 20 steps for mm1)",
    )
    cap.add_argument(
        "--resolution",
        type=float,
        default=0.02,
        help="width of the final bracket of the bisection for mu*, req/s (default: 0.02)",
    )
    _add_promises(cap)
    cap.add_argument(
        "--mix",
        choices=("azure", "identical"),
        default="azure",
        help="request lengths: the Azure conversation mix or identical requests",
    )
    cap.add_argument("--requests", type=int, default=5000, help="requests per rate (default: 5000)")
    cap.add_argument(
        "--precision",
        type=_fraction_arg("--precision"),
        default=0.02,
        help="relative standard error of mu* to reach with independent replications, in (0, 1) "
        "(default: 0.02; at least 5 and at most 12 replications)",
    )
    cap.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    cap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    cap.set_defaults(run=_capacity)

    cost = sub.add_parser(
        "cost",
        help="cost per token, idle capacity, spot instances",
        description="c = C_hour / (3600 nu rho); with --discount and --lost, the spot "
        "factor (1 - d)/(1 - omega).",
    )
    cost.add_argument(
        "--price",
        type=float,
        default=EXAMPLE.price_per_replica_hour,
        help="price of a replica-hour (default: %(default)s)",
    )
    cost.add_argument(
        "--tokens-per-s",
        type=float,
        default=EXAMPLE.tokens_per_s,
        help="tokens/s a replica sustains within its SLOs (default: %(default)s)",
    )
    cost.add_argument(
        "--utilization",
        type=float,
        default=1.0,
        help="mean utilization rho in (0, 1] (default: %(default)s)",
    )
    cost.add_argument("--discount", type=float, help="spot discount d in [0, 1)")
    cost.add_argument(
        "--lost", type=float, help="share of spot work lost or redone, omega in [0, 1)"
    )
    cost.add_argument("--json", action="store_true", help="print JSON")
    cost.set_defaults(run=_cost)

    roof = sub.add_parser(
        "roofline",
        help="MFU, MBU and the decode roofline of a model on a GPU",
        description="Utilization figures of decoding: MFU, MBU, arithmetic intensity.",
    )
    roof.add_argument(
        "--params", type=float, default=EXAMPLE.params, help="parameters (default: 8e9)"
    )
    roof.add_argument(
        "--bytes-per-param",
        type=float,
        default=EXAMPLE.bytes_per_param,
        help="bytes per weight (default: 2, bf16)",
    )
    roof.add_argument(
        "--layers", type=int, default=EXAMPLE.layers, help="layers (default: %(default)s)"
    )
    roof.add_argument(
        "--kv-heads", type=int, default=EXAMPLE.kv_heads, help="KV heads (default: %(default)s)"
    )
    roof.add_argument(
        "--head-dim", type=int, default=EXAMPLE.head_dim, help="head size (default: %(default)s)"
    )
    roof.add_argument(
        "--kv-bytes", type=float, default=2.0, help="bytes per cached value (default: 2)"
    )
    roof.add_argument(
        "--batch", type=int, default=EXAMPLE.batch, help="sequences per step (default: %(default)s)"
    )
    roof.add_argument(
        "--context",
        type=float,
        default=EXAMPLE.context_tokens,
        help="context tokens per sequence (default: %(default)s)",
    )
    roof.add_argument(
        "--tpot",
        type=float,
        default=EXAMPLE.tpot_s,
        help="seconds per decode step (default: 0.025)",
    )
    roof.add_argument(
        "--peak-flops", type=float, default=EXAMPLE.peak_flops, help="FLOP/s (default: 1e15)"
    )
    roof.add_argument(
        "--peak-bandwidth",
        type=float,
        default=EXAMPLE.peak_bandwidth,
        help="bytes/s (default: 3e12)",
    )
    roof.add_argument("--json", action="store_true", help="print JSON")
    roof.set_defaults(run=_roofline)

    pl = sub.add_parser(
        "plan",
        help="a fleet for your own traffic: mu*, L*, the policies priced, an HPA and KEDA object",
        description="Reads a request log with the Azure trace's columns (TIMESTAMP, "
        "ContextTokens, GeneratedTokens) in time order, or a per-minute rate series (minute, "
        "rate_rps); measures mu* of the replica on the log's length mix and the concurrency "
        "target L* = rho* mu* W; replays the traffic under the book's policies, priced per "
        "token; writes an autoscaling/v2 HPA and a KEDA ScaledObject on requests in flight.",
    )
    _add_traffic(pl)
    pl.add_argument(
        "--model",
        help="model shape: a name (llama-3-8b, llama-3.1-8b, llama-3-70b, llama-3.3-70b, "
        "llama-2-7b, llama-2-13b, example-8b) or key=value,…",
    )
    pl.add_argument(
        "--gpu", help="GPU: a name (a100-80gb, h100-sxm, h200-sxm, l40s, example) or key=value,…"
    )
    pl.add_argument(
        "--gpus", type=int, default=None, help=f"GPUs per replica, 1 to {MAX_GPUS} (default 1)"
    )
    pl.add_argument(
        "--batch",
        type=int,
        default=None,
        help=f"batch cap B (max_num_seqs), 1 to {MAX_BATCH} (default: 64 for the running "
        "example; vLLM V1's for the card for a replica built from --model and --gpu: 1024 on "
        "an H100 or H200, 256 on an A100 or L40S or from measurements alone)",
    )
    pl.add_argument(
        "--dtype",
        choices=("bf16", "fp16", "fp8"),
        default=None,
        help="the weights' type with --model and --gpu (default: bf16); fp8 computes at the "
        "card's FP8 peak where it has FP8 tensor cores",
    )
    pl.add_argument(
        "--kv-dtype",
        choices=("bf16", "fp16", "fp8"),
        default=None,
        help="the KV cache's type (default: the weights')",
    )
    pl.add_argument(
        "--token-budget",
        type=int,
        default=None,
        help=f"tokens one step carries (max_num_batched_tokens), the batch cap to "
        f"{MAX_TOKEN_BUDGET:,} (default: vLLM V1's for the card, 8192 on an H100 or H200 and "
        "2048 elsewhere, or the batch cap if larger)",
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
        metavar="B,CONTEXT,S",
        help="a measured decode step: batch, context tokens per sequence, seconds (2 or more)",
    )
    pl.add_argument(
        "--ttft-point",
        action="append",
        metavar="PROMPT,S",
        help="a measured TTFT on an idle server: prompt tokens, seconds (2 or more)",
    )
    pl.add_argument(
        "--price",
        type=float,
        default=None,
        help="price of one GPU-hour; a replica pays it for each of its --gpus (default: the "
        "GPU's on-demand list price in the catalogue; the running example's 2)",
    )
    _add_fleet_options(pl)
    pl.add_argument(
        "--replica",
        help="a replica file written by `replicaplan fit` (instead of --model/--gpu/timings)",
    )
    pl.set_defaults(run=_plan)

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
    fi.add_argument("--model", required=True, help="the model it served (a catalogue name)")
    fi.add_argument("--gpu", required=True, help="the GPU it ran on (a name or key=value,…)")
    fi.add_argument("--gpus", type=int, default=None, help="GPUs of the server (default 1)")
    fi.add_argument(
        "--batch", type=int, default=None, help="its max_num_seqs (default: vLLM's for the card)"
    )
    fi.add_argument("--dtype", choices=("bf16", "fp16", "fp8"), default=None, help="its weights")
    fi.add_argument("--out", help="write the fitted replica here (JSON)")
    fi.set_defaults(run=_fit)

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
    _add_traffic(se)
    se.add_argument(
        "--model",
        required=True,
        help="model shape: a name (llama-3-8b, llama-3.1-8b, llama-3-70b, llama-3.3-70b, "
        "llama-2-7b, llama-2-13b) or key=value,…",
    )
    from replicaplan.planner import grid as grid_defaults  # names only: imports no model

    def listed(values) -> str:
        return ",".join(str(v) for v in values)

    for option, values, what in (
        ("--gpu-grid", grid_defaults.SEARCH_GPUS, "GPUs from the catalogue"),
        ("--gpus-grid", grid_defaults.SEARCH_GPUS_PER_REPLICA, "GPUs per replica"),
        ("--batch-grid", grid_defaults.SEARCH_BATCHES, "batch caps"),
        ("--budget-grid", grid_defaults.SEARCH_TOKEN_BUDGETS, "prefill token budgets"),
        (
            "--prefill-grid",
            ["chunked" if c else "separate" for c in grid_defaults.SEARCH_CHUNKED],
            "chunked, separate, or both",
        ),
    ):
        se.add_argument(option, default=listed(values), help=f"{what} (default: %(default)s)")
    se.add_argument(
        "--price",
        action="append",
        metavar="GPU=PRICE",
        help="price of one GPU-hour of a GPU, overriding the catalogue's list price (repeat)",
    )
    se.add_argument(
        "--requests",
        type=int,
        default=grid_defaults.SEARCH_REQUESTS,
        help="requests per rate in each candidate's screening sweep (default: %(default)s)",
    )
    se.add_argument(
        "--jobs", type=int, default=None, help="processes on this machine (default: the CPUs)"
    )
    se.add_argument(
        "--dask", metavar="ADDRESS", help="a Dask scheduler (tcp://host:8786) to run on instead"
    )
    _add_fleet_options(se)
    se.add_argument(
        "--replica",
        help="a replica file written by `replicaplan fit`: every configuration is built with "
        "the engine constants fitted there (floor, time per sequence, shares of the peaks)",
    )
    se.set_defaults(run=_search)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = args.run(args)
    except ValueError as err:
        print(f"replicaplan {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # every output is staged, so an interrupt leaves nothing behind
        print(f"\nreplicaplan {args.command}: interrupted; nothing written", file=sys.stderr)
        return 130
    text, status = result if isinstance(result, tuple) else (result, 0)
    print(text)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

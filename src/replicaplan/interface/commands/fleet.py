"""What ``plan``, ``search`` and ``fit`` share: their options (the promises, the traffic, the
replica, the deployment's names and the outputs), the replica built from them, every file and
name checked before any work, the plan's one call, and its outputs staged and committed together.

Layer: interface.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
from pathlib import Path

from replicaplan.autoscalers.engines import ENGINES, SIGNALS  # names only: imports no model
from replicaplan.core.example import EXAMPLE
from replicaplan.interface import options as opt
from replicaplan.serving.catalogue import (
    DEFAULT_BATCH,
    DTYPE_BYTES,
    GPUS,
    MODELS,
    TOKEN_BUDGET,
    engine_defaults,
    from_text,
)


# ------------------------------------------------------------------ options
def add_promises(parser: argparse.ArgumentParser) -> None:
    """The promises a replica is sized against, spelled the same in every command."""
    parser.add_argument(
        "--quota",
        type=opt.open_share,
        default=EXAMPLE.quota,
        help="share of requests that must keep both promises, in (0, 1) (default: %(default)s)",
    )
    parser.add_argument(
        "--ttft-slo",
        type=opt.positive,
        default=EXAMPLE.ttft_slo_s,
        help="TTFT promise, s, > 0 (default: %(default)s)",
    )
    parser.add_argument(
        "--tpot-slo",
        type=opt.positive,
        default=EXAMPLE.tpot_slo_s,
        help="TPOT promise, s, > 0 (default: %(default)s)",
    )


def add_traffic(parser: argparse.ArgumentParser) -> None:
    traffic = parser.add_mutually_exclusive_group(required=True)
    traffic.add_argument(
        "--log", help="log (CSV, gzip or Parquet): TIMESTAMP, ContextTokens, GeneratedTokens"
    )
    traffic.add_argument("--rates", help="CSV per-minute series (minute, rate_rps)")
    parser.add_argument(
        "--lengths", help="request log whose length mix to use with --rates (default: Azure conv)"
    )
    parser.add_argument(
        "--start",
        type=opt.instant,
        default=None,
        metavar="TIME",
        help="with --rates: when the series' minute 0 is, ISO 8601 with its zone, such as "
        "2024-03-04T00:00Z (default: 1970-01-01T00:00Z, a Thursday); it places the schedule's "
        "weekdays and hours",
    )
    parser.add_argument(
        "--clip-outliers",
        action="store_true",
        help="lower each minute more than ten times its neighbours' and the median minute's "
        "rate (a one-minute spike) to its neighbours' level before planning; without it such "
        "minutes are named on standard error and sized for",
    )
    parser.add_argument(
        "--timezone",
        type=opt.time_zone,
        default="Etc/UTC",
        metavar="ZONE",
        help="IANA time zone the schedule is learned in and the KEDA cron triggers fire in, such "
        "as Europe/Rome (default: %(default)s); summer time follows the zone's rules",
    )


def add_replica(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """The replica's model, GPU, GPUs per replica, batch cap and weights' type."""
    parser.add_argument(
        "--model",
        required=required,
        help=f"model shape: a name ({', '.join(MODELS)}) or key=value,…",
    )
    parser.add_argument(
        "--gpu",
        required=required,
        help=f"GPU: a name ({', '.join(GPUS)}) or key=value,…",
    )
    parser.add_argument(
        "--gpus",
        type=opt.whole(1, opt.MAX_GPUS),
        default=None,
        help=f"GPUs per replica, 1 to {opt.MAX_GPUS} (default 1)",
    )
    parser.add_argument(
        "--batch",
        type=opt.whole(1, opt.MAX_BATCH),
        default=None,
        help=f"batch cap B (max_num_seqs), 1 to {opt.MAX_BATCH:,} (default: 64 for the running "
        "example; vLLM V1's for the card for a replica built from --model and --gpu: 1024 on "
        "an H100 or H200, 256 on an A100 or L40S or from measurements alone)",
    )
    parser.add_argument(
        "--dtype",
        choices=tuple(DTYPE_BYTES),
        default=None,
        help="the weights' type with --model and --gpu (default: bf16); fp8 computes at the "
        "card's FP8 peak where it has FP8 tensor cores",
    )


def add_fleet_options(parser: argparse.ArgumentParser) -> None:
    """What ``plan`` and ``search`` share: the promises and target, the start-up, the budget,
    the deployment's names, and the outputs."""
    parser.add_argument(
        "--signal",
        choices=SIGNALS,
        default=SIGNALS[0],
        help="what the autoscaler holds per replica: requests completed a second against "
        "rho* mu* (default; the engine's request counter, which leaves a backlog out), requests "
        "in flight against L*, or the tokens held in the KV cache",
    )
    parser.add_argument(
        "--precision",
        type=opt.open_share,
        default=0.02,
        help="relative standard error of mu* the plan measures it to, with independent "
        "replications, in (0, 1) (default: 0.02; at least 5 and at most 12 replications)",
    )
    parser.add_argument(
        "--target",
        type=opt.share,
        default=EXAMPLE.target_utilization,
        help="rho*, the share of mu* each replica is given, in (0, 1] (default: %(default)s)",
    )
    add_promises(parser)
    parser.add_argument(
        "--startup",
        type=opt.whole(0, opt.MAX_STARTUP_MIN),
        default=EXAMPLE.startup_min,
        help=f"start-up time, whole minutes from 0 to {opt.MAX_STARTUP_MIN:,} "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--short-budget",
        type=opt.number(0.0, 1.0, high_open=True),
        default=None,
        metavar="SHARE",
        help="share of requests the recommended policy may leave beyond capacity, in [0, 1) "
        "(default: a tenth of 1 - quota, 0.01 for the 90%% quota; 0 demands every minute "
        "covered)",
    )
    parser.add_argument(
        "--max-replicas",
        type=opt.whole(1, opt.INT32_MAX),
        default=None,
        metavar="N",
        help=f"the manifests' maxReplicas, 1 to {opt.INT32_MAX:,} (the API's int32) and at "
        "least the quietest minute's fleet (default: twice the busiest minute's fleet, a "
        "safety margin)",
    )
    parser.add_argument(
        "--min-replicas",
        type=opt.whole(0, opt.INT32_MAX),
        default=None,
        metavar="N",
        help="the manifests' minReplicas, 0 to the API's int32 (default: the quietest minute's "
        "fleet); 0 scales to zero, with KEDA only (--keda) and a --wake-query",
    )
    parser.add_argument(
        "--wake-query",
        type=opt.promql,
        default=None,
        metavar="PROMQL",
        help="with --min-replicas 0: the PromQL of the requests arriving a second, read in "
        "front of the engine (an ingress or gateway counter, which exists with no replica "
        "running); KEDA wakes the fleet when it is above 0 and also scales on it",
    )
    parser.add_argument(
        "--latency-guard",
        action="store_true",
        help="add to the ScaledObject (--keda) a trigger on the fleet's TTFT quantile at the "
        "quota (p90 for 0.9, from the engine's histogram) against --ttft-slo: it asks for more "
        "replicas, in proportion, only while that quantile passes the promise (not in the "
        "replays, which have no TTFT)",
    )
    parser.add_argument(
        "--polling-interval",
        type=opt.whole(1, 3600),
        default=None,
        metavar="S",
        help="KEDA's pollingInterval, seconds from 1 to 3,600 (default: KEDA's, 30)",
    )
    parser.add_argument(
        "--cooldown-period",
        type=opt.whole(0, 86_400),
        default=None,
        metavar="S",
        help="KEDA's cooldownPeriod, seconds from 0 to 86,400 (default: KEDA's, 300; it acts "
        "only on a scale to zero)",
    )
    parser.add_argument(
        "--name",
        type=opt.object_name,
        default="llm",
        help="name of the HPA and of its Deployment, a DNS-1123 name (default: %(default)s)",
    )
    parser.add_argument(
        "--metric",
        type=opt.metric,
        default=None,
        help="name of the per-pod metric the manifests scale on, a Prometheus metric name "
        "(default: requests_per_second; requests_in_flight or kv_cache_tokens with --signal)",
    )
    parser.add_argument(
        "--prometheus",
        type=opt.prometheus,
        default="http://prometheus.monitoring.svc:9090",
        help="Prometheus address for the KEDA trigger, an http(s) URL (default: %(default)s)",
    )
    parser.add_argument(
        "--engine",
        default="vllm",
        choices=sorted(ENGINES),
        help="the serving engine whose metrics the KEDA query and the adapter rule read",
    )
    parser.add_argument(
        "--namespace",
        type=opt.namespace,
        default="default",
        help="the deployment's namespace, a DNS-1123 label (default: %(default)s)",
    )
    parser.add_argument(
        "--served-model",
        type=opt.label_value,
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


# ------------------------------------------------------------------ the replica
def hardware(kind: str, text: str):
    """``catalogue.from_text``, its errors named by the option (``--gpu: …``)."""

    try:
        return from_text(kind, text)
    except ValueError as err:
        raise ValueError(f"--{err}") from None


def replica(args: argparse.Namespace):
    """The replica the plan sizes (``base_replica``) with its scheduler's options applied:
    --token-budget and --prefill."""
    from dataclasses import replace

    model = base_replica(args)
    changes = {"chunked_prefill": args.prefill == "chunked"}
    if args.token_budget is not None:
        changes["token_budget"] = args.token_budget
    # a replica is checked when it is made: one the options do not change is not made again
    changes = {k: v for k, v in changes.items() if getattr(model, k) != v}
    if not changes:
        return model
    try:
        return replace(model, **changes)
    except ValueError as err:
        raise ValueError(f"--token-budget: {err}") from None


def base_replica(args: argparse.Namespace):
    """The replica the plan sizes: the running example, a datasheet, or a fit to measurements."""
    from dataclasses import replace

    from replicaplan.serving.replica import ReplicaModel

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
    gpus = args.gpus or 1
    if not args.model:
        raise ValueError("--model is required with --gpu, --tpot-point or --ttft-point")
    shape = hardware("model", args.model)
    if not (args.gpu or fitting):
        raise ValueError("--gpu is required with --model (or measured --tpot/--ttft-point)")
    card = hardware("gpu", args.gpu) if args.gpu else None
    dtypes = {"dtype": getattr(args, "dtype", None), "kv_dtype": getattr(args, "kv_dtype", None)}
    if (dtypes["dtype"] or dtypes["kv_dtype"]) and not card:
        raise ValueError("--dtype and --kv-dtype need --gpu: a fit measures the server as it ran")
    try:
        sheet = card and ReplicaModel.from_hardware(
            shape, card, gpus=gpus, batch=args.batch, **dtypes
        )
    except ValueError as err:  # the GPUs that cannot hold or split the model: named by flag
        if str(err).startswith("gpus:"):
            raise ValueError(f"--{err}") from None
        if "do not fit" in str(err):
            named = f"--gpus {gpus} --gpu {args.gpu}: {err}".replace("(gpus)", "(--gpus)")
            raise ValueError(named) from None
        raise
    if not fitting:
        return sheet
    # vLLM V1's defaults for the card, as ReplicaModel.from_hardware takes them
    batch = args.batch or (engine_defaults(card)[0] if card else DEFAULT_BATCH)
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
        tpot=args.tpot_point or [],
        ttft=args.ttft_point or [],
        batch=batch,
        token_budget=max(TOKEN_BUDGET, batch),
        **memory,
    )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return fitted


# ------------------------------------------------------------------ inputs, before any work
def progress(share: float, doing: str = "reading the log") -> None:
    """A progress bar on the terminal's standard error (a long log read, a search screened)."""
    bar = "#" * int(30 * share)
    print(f"\r{doing} [{bar:<30}] {100 * share:5.1f} %", end="", file=sys.stderr)
    if share >= 1:
        print(file=sys.stderr)


def checked_inputs(args: argparse.Namespace) -> dict:
    """Everything about the command's files that can be refused before any work: the inputs
    exist, each output has its own path in a folder that takes files, the report directory is
    free. (Names, addresses and numbers were checked as the flags were parsed.) Returns the
    outputs asked for, by option."""
    from replicaplan.interface.files import check_writable
    from replicaplan.interface.plan_report import check_report_dir

    inputs = (
        ("--log", args.log),
        ("--rates", args.rates),
        ("--lengths", args.lengths),
        ("--replica", getattr(args, "replica", None)),
    )
    for option, value in inputs:
        if value and not (Path(value).is_file() or (option != "--replica" and _stream(value))):
            raise ValueError(f"{option}: no such file: {value}")
    if sum(value == "-" for _, value in inputs) > 1:
        raise ValueError(
            f"{', '.join(o for o, v in inputs if v == '-')}: one input at most can be -"
        )
    if args.log and args.start is not None:
        raise ValueError("--start: a log carries its own timestamps; give --start with --rates")
    if args.log and args.lengths:
        raise ValueError(
            "--lengths: a log carries its own lengths; give --lengths with --rates only"
        )
    if args.min_replicas == 0:
        if not args.wake_query:
            raise ValueError(
                "--min-replicas 0 needs --wake-query: the engine's own series vanish with its "
                "last pod, so nothing in them could wake the fleet"
            )
        if args.manifest:
            raise ValueError(
                "--manifest: an HPA cannot scale to zero (minReplicas 0 needs the alpha "
                "HPAScaleToZero feature gate); with --min-replicas 0 write --keda"
            )
    elif args.wake_query:
        raise ValueError("--wake-query wakes a fleet that scales to zero: give --min-replicas 0")
    read = {Path(value).resolve(): option for option, value in inputs if value and value != "-"}
    outputs = {
        "--manifest": args.manifest,
        "--keda": args.keda,
        "--adapter": args.adapter,
        "--deployment": getattr(args, "deployment", None),
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
    if "--deployment" in outputs:
        if args.engine != "vllm":
            raise ValueError("--deployment writes vLLM's server; it needs --engine vllm")
        if args.model not in MODELS or MODELS[args.model].repo is None:
            raise ValueError(
                "--deployment needs --model with a catalogue name (the Deployment loads the "
                f"model by its repository: {', '.join(m for m in MODELS if MODELS[m].repo)})"
            )
    return outputs


def _stream(value: str) -> bool:
    """``-`` (standard input) or a pipe: a FIFO, or the ``/dev/fd/N`` of bash's ``<(…)``."""
    if value == "-":
        return True
    try:
        return stat.S_ISFIFO(os.stat(value).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def _readable(value: str, option: str):
    """A path the readers can open twice (they look at a file's first bytes for its format):
    the file itself, or standard input or a pipe copied whole into a temporary file, removed
    afterwards. An error names the input as the reader was given it, not the copy."""
    if not _stream(value):
        yield value
        return
    import shutil
    import tempfile

    name = "standard input" if value == "-" else value
    with tempfile.TemporaryDirectory(prefix="replicaplan-input-") as folder:
        copy = Path(folder) / "input"
        with open(copy, "wb") as out:
            if value == "-":
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            else:
                with open(value, "rb") as source:
                    shutil.copyfileobj(source, out, 1 << 20)
        try:
            yield str(copy)
        except ValueError as err:
            raise ValueError(str(err).replace(str(copy), f"{option} {name}")) from None


def source_name(args: argparse.Namespace) -> str:
    """The traffic's name in a report: the file's name, "standard input", or a pipe's path."""
    value = args.log or args.rates
    if value == "-":
        return "standard input"
    return value if _stream(value) else Path(value).name


def traffic(args: argparse.Namespace):
    """The log (with a progress bar on a terminal) or the rate series, and the length mix;
    each may be a file, ``-`` (standard input) or a pipe."""
    from replicaplan.traffic.logs import read_rate_series, read_trace

    shown = progress if sys.stderr.isatty() else None
    if args.log:
        with _readable(args.log, "--log") as path:
            log = read_trace(path, progress=shown)
    else:
        with _readable(args.rates, "--rates") as path:
            log = read_rate_series(path)
    lengths = None
    if args.lengths:
        with _readable(args.lengths, "--lengths") as path:
            lengths = read_trace(path)
    return log, lengths


# ------------------------------------------------------------------ the plan and its outputs
def planned_traffic(args: argparse.Namespace, log, lengths):
    """The per-minute rates, length mix and start to plan. A request log gives its own (its
    rates, its lengths, its first request's time; ``--lengths`` and ``--start`` are refused
    with it); a rate series takes ``--lengths`` and ``--start``. A spike minute
    (``logs.spike_minutes``) is named on standard error, since the fleet's bound is sized for
    it, or, with ``--clip-outliers``, lowered to its neighbours' level."""
    from replicaplan.core.calendar import MINUTES_PER_DAY
    from replicaplan.traffic.logs import TraceFile, clip_spikes, spike_minutes

    if isinstance(log, TraceFile):
        rate, lengths, start = log.rate_per_minute(), log, log.start
    else:
        rate, start = log, args.start
    spikes = spike_minutes(rate)
    if spikes.size == 0:
        return rate, lengths, start
    first = int(spikes[0])
    where = f"minute {first} ({first // 60 % 24:02d}:{first % 60:02d} after the log's start)"
    if first >= MINUTES_PER_DAY:
        where = f"minute {first} (day {first // MINUTES_PER_DAY + 1})"
    if not args.clip_outliers:
        print(
            f"note: {spikes.size} minute(s) out of all proportion to their neighbours, the first "
            f"{where} at {rate[first]:,.1f} req/s: the plan sizes the fleet's bound for them; "
            "--clip-outliers lowers each to its neighbours' level",
            file=sys.stderr,
        )
        return rate, lengths, start
    print(
        f"note: {spikes.size} spike minute(s) lowered to their neighbours' level, the first "
        f"{where}",
        file=sys.stderr,
    )
    return clip_spikes(rate), lengths, start


def plan_of(args: argparse.Namespace, log, lengths, model, price_per_gpu_hour, size):
    """``plan.plan`` with the command's options and ``size`` (``sizing(args)``): the one call
    both commands make."""
    from replicaplan.planner.plan import plan

    rate, lengths, start_s = planned_traffic(args, log, lengths)
    try:
        return plan(
            rate,
            model,
            lengths=lengths,
            sizing=size,
            promises=promises(args),
            startup=startup(args),
            wake_query=args.wake_query,
            latency_guard=args.latency_guard,
            keda_polling_s=args.polling_interval,
            keda_cooldown_s=args.cooldown_period,
            price_per_gpu_hour=price_per_gpu_hour,
            name=args.name,
            metric_name=args.metric,
            prometheus=args.prometheus,
            engine=args.engine,
            namespace=args.namespace,
            served_model=args.served_model,
            start_s=start_s,
            timezone=args.timezone,
            sensitivity=bool(args.report),
            precision=args.precision,
            signal=args.signal,
        )
    except ValueError as err:  # what depends on the log, named by the flags that set it
        if str(err).startswith(("max_replicas", "the promises (")):
            raise ValueError(by_flags(str(err))) from None
        raise


def startup(args: argparse.Namespace):
    """The ``Startup`` of ``--startup`` (whole minutes, already checked by its type)."""
    from replicaplan.core.startup import Startup

    return Startup(args.startup)


def sizing(args: argparse.Namespace):
    """The ``Sizing`` the command's flags make: each flag was checked by its type, and the pair
    of bounds is checked here, by the flags' names."""
    from replicaplan.core.sizing import Sizing

    try:
        return Sizing(
            target_utilization=args.target,
            min_replicas=args.min_replicas,
            max_replicas=args.max_replicas,
            short_budget=args.short_budget,
        )
    except ValueError as err:
        raise ValueError(by_flags(str(err))) from None


def promises(args: argparse.Namespace):
    """The ``Promises`` the command's flags make (each flag already checked by its type)."""
    from replicaplan.core.promises import Promises

    return Promises(ttft_slo_s=args.ttft_slo, tpot_slo_s=args.tpot_slo, quota=args.quota)


def by_flags(text: str) -> str:
    """A message naming the promises as ``Promises.said`` does, or the sizing's bounds, with
    the flags' names instead: '(ttft_slo_s=1.0, …)' → '(--ttft-slo 1.0, …)', 'max_replicas' →
    '--max-replicas'."""
    for name, flag in (
        ("ttft_slo_s=", "--ttft-slo "),
        ("tpot_slo_s=", "--tpot-slo "),
        ("quota=", "--quota "),
        ("max_replicas", "--max-replicas"),
        ("min_replicas", "--min-replicas"),
    ):
        text = text.replace(name, flag)
    return text


def write(args: argparse.Namespace, p, outputs: dict, extra=None, deployment=()) -> list[str]:
    """Every output staged beside its target, then all renamed into place (``files.Staging``);
    ``extra(folder)`` adds files to the report's folder, ``deployment`` holds the objects the
    ``--deployment`` file gets (the Deployment and its PodMonitor)."""
    from replicaplan.autoscalers.manifest import to_yaml
    from replicaplan.interface.files import Staging
    from replicaplan.interface.plan_report import fill_report

    source = Path(args.log or args.rates)
    with Staging() as out:
        for option, obj in (("--manifest", p.hpa), ("--keda", p.keda), ("--adapter", p.adapter)):
            if option in outputs:
                out.file(outputs[option], to_yaml(obj))
        if "--deployment" in outputs:  # one YAML stream
            out.file(outputs["--deployment"], "---\n".join(to_yaml(o) for o in deployment))
        if args.report:
            folder = out.directory(args.report)
            fill_report(p, folder, fmt=args.report_format, log=source.name)
            if extra is not None:
                extra(folder)
    return list(outputs.values())


def plan_json(args: argparse.Namespace, p, log) -> dict:
    """The plan's JSON as both commands print it: the log's path and, for a log, its requests."""
    from replicaplan.interface.plan_report import summary

    requests = {"requests": int(log.prompt.size)} if args.log else {}
    return summary(p, log=str(Path(args.log or args.rates)), **requests)


def served_model_note(args: argparse.Namespace) -> None:
    """Without --served-model the queries select the engine's series labelled with --name, which
    a server started with its default name (the model's path) never carries: say so."""
    if args.served_model is None and (args.keda or args.adapter or args.manifest):
        print(
            f'note: the queries select model_name="{args.name}" (--name); vLLM labels its '
            "series with its --served-model-name, by default the model's path: give "
            f"--served-model, or start the engine with --served-model-name {args.name}",
            file=sys.stderr,
        )


def written(paths) -> str:
    return "".join(f"\n(written to {w})" for w in paths)

"""The scaling signals side by side on the issue-#31 grid of cases (not a speed benchmark).

Cases: the book's simulated day (its ramp and its 21:00 step) on the running example's fluid
replica; the Azure conversation and code traces with the catalogue's Llama-3-8B on an A100 and
with the running example (the vendored hour of each at six times its rate, about the full
trace's; the full traces too when ../shared has them); a synthetic burst of seven times the
quiet rate for ten minutes against a ten-minute start-up. Every HPA is bounded at twice the
busiest minute's fleet. Run: .venv/bin/python benchmarks/signal_table.py
"""

from pathlib import Path

from replicaplan.core.example import EXAMPLE as E
from replicaplan.core.sizing import ReplicaRate
from replicaplan.planner import signals as S
from replicaplan.planner.calibration import measured_replica
from replicaplan.planner.operating import operating_point
from replicaplan.scenarios.synthetic import reference_traffic
from replicaplan.serving.fluid import FluidReplica
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.control import per_second
from replicaplan.traffic import logs

ROOT = Path(__file__).resolve().parents[1]
FULL = ROOT.parent / "shared" / "data" / "azure-llm-inference-2023"


def cases():
    yield S.Case(
        "the day (step 20:55-21:40)",
        per_second(reference_traffic()),
        FluidReplica(),
        ReplicaRate(E.mu_star_rps, E.target_utilization),
        E.concurrency_target,
        E.startup_min * 60,
        window=(20 * 3600 + 55 * 60, 21 * 3600 + 40 * 60),
    )
    traces = [
        (f"{kind} x6", ROOT / f"data/azure-llm-inference-2023/{kind}_sample.csv", 6)
        for kind in ("conv", "code")
    ]
    for kind, name in (("conv", "AzureLLMInferenceTrace_conv.csv"),
                       ("code", "AzureLLMInferenceTrace_code.csv")):  # fmt: skip
        if (FULL / name).exists():
            traces.append((f"{kind} full", FULL / name, 1))
    for label, path, scale in traces:
        log = logs.read_trace(path)
        for replica_label, model in (
            ("Llama-3-8B/A100", ReplicaModel.from_hardware("llama-3-8b", "a100-80gb")),
            ("running example", ReplicaModel()),
        ):
            point = operating_point(log, model, n_requests=2000)
            measured = measured_replica(model, log.length_mix(), point, n_requests=2000)
            yield S.Case(
                f"{label}, {replica_label}",
                per_second(log.rate_per_minute()) * scale,
                measured,
                ReplicaRate(point.mu_star, point.target_utilization),
                point.concurrency_target,
                E.startup_min * 60,
            )
    yield S.Case(
        "burst 7x for 10 min, 10 min start-up",
        S.burst(2.0),
        FluidReplica(),
        ReplicaRate(E.mu_star_rps, E.target_utilization),
        E.concurrency_target,
        600,
    )


def main() -> None:
    for case in cases():
        rows = S.table([case])
        chase = rows[0]
        today = S.measure(case, "running + waiting", bound=case.busiest_fleet)
        print(f"\n{case.name}: the busiest minute needs {case.busiest_fleet}, bound "
              f"{2 * case.busiest_fleet}")  # fmt: skip
        print(f"  {'signal':30} {'waiting s':>9} {'beyond':>7} {'replica-h':>9} {'/chase':>6} "
              f"{'peak/need':>9} {'changes':>7}")  # fmt: skip
        for r in [*rows, today]:
            label = "today's, bounded at the need" if r is today else r.signal
            print(
                f"  {label:30} {r.waiting_s:9d} {r.beyond:7.2%} {r.replica_hours:9.2f} "
                f"{r.replica_hours / chase.replica_hours:6.2f} {r.peak:4d}/{r.need:<4d} "
                f"{r.changes:7d}"
            )


if __name__ == "__main__":
    main()

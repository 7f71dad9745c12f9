"""A plan of a reader's own fleet, end to end (planner/plan.py): its replays read back from
its YAML, its bounds, its prices, its signals."""

import math
from dataclasses import replace
from datetime import UTC
from pathlib import Path

import numpy as np
import pytest
import yaml

from replicaplan.autoscalers import manifest
from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import Startup
from replicaplan.economics.cost import Pricing
from replicaplan.planner import plan
from replicaplan.scenarios.synthetic import noisy_days
from replicaplan.serving.fluid import replicas_needed
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic import loadgen as lg
from replicaplan.traffic import logs

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "azure-llm-inference-2023"


ROOT = Path(__file__).resolve().parents[1]


SAMPLE_LOG = ROOT / "data/azure-llm-inference-2023/conv_sample.csv"


WEEK = ROOT / "data/synthetic-week/rates.csv"


HAND_WRITTEN_HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llm}
  minReplicas: 2
  maxReplicas: 9
  metrics:
  - type: Pods
    pods:
      metric: {name: requests_in_flight}
      target: {type: AverageValue, averageValue: "12500m"}
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      policies: [{type: Pods, value: 3, periodSeconds: 60}]
    scaleDown:
      stabilizationWindowSeconds: 240
      policies: [{type: Percent, value: 50, periodSeconds: 60}]
"""


def test_ramp_and_step_reserves_by_hand():
    ramp = np.arange(0, 60.0, 1.0)  # +1 req/s every minute
    # over a 10-minute start-up the ramp adds 10 req/s: ⌈10/6.4⌉ = 2; one minute's step: 1
    assert plan.steepest_ramp_reserve(ramp, ReplicaRate(8.0, 0.8), Startup(10)) == 2
    assert plan.largest_step_reserve(ramp, ReplicaRate(8.0, 0.8)) == 1
    assert plan.spares_for(ramp, ReplicaRate(8.0, 0.8), Startup(10)) == 2
    assert plan.steepest_ramp_reserve(ramp, ReplicaRate(8.0, 0.8), Startup(0)) == 0
    step = np.r_[np.full(30, 2.0), np.full(30, 30.0)]
    assert plan.spares_for(step, ReplicaRate(8.0, 0.8), Startup(10)) == math.ceil(28 / 6.4) == 5


@pytest.fixture(scope="module")
def two_days():
    rate = noisy_days(2, noise=0.1, seed=3).ravel()
    return plan.plan(rate, startup=Startup(15), n_requests=2000)


@pytest.mark.slow
def test_an_hpa_written_by_hand_is_read_as_kubernetes_would_apply_it(two_days):
    """An operator's own manifest, not one the package wrote: its target (12.5 requests per
    pod, as a milli-quantity), bounds and behavior drive the replay, and the replayed fleet
    keeps to them: never outside [2, 9], never more than 3 pods up in a minute."""
    ctrl = manifest.controller_from_manifest(yaml.safe_load(HAND_WRITTEN_HPA))
    hpa = manifest.autoscaler_from_manifest(yaml.safe_load(HAND_WRITTEN_HPA))
    assert (hpa.min_replicas, hpa.max_replicas, hpa.target) == (2, 9, 12.5)
    assert ctrl.targets == {"concurrency": 12.5}
    assert hpa.down.stabilization_s == 240 and hpa.up.policies[0].value == 3
    run = plan.hpa_replay(
        two_days.rate,
        HAND_WRITTEN_HPA,
        two_days.replica,
        initial=int(two_days.hpa_run.ready[0]),
        startup=Startup(15),
        signal="concurrency",
    )
    assert run.paid.min() >= 2 and run.ready.max() <= 9
    called = np.diff(run.paid.astype(int))
    per_minute = [called[i : i + 60].clip(min=0).sum() for i in range(0, called.size - 60, 60)]
    assert max(per_minute) <= 3, max(per_minute)
    assert run.scale_changes > 4  # it followed the two days up and down


def test_the_autoscalers_replays_start_from_the_fleet_the_policies_start_from():
    """Every replay of a plan starts from one capacity, μ* at the target: the first minute's
    ⌈λ(0)/(ρ*μ*)⌉, as the chase starts (within the manifest's bounds). The HPA's replay used
    to start from the measured replica's top rate c_m at full use, fewer replicas than the
    policies it is compared with (issue #32)."""
    busy_start = np.r_[np.full(20, 40.0), np.full(20, 10.0)]  # req/s a minute
    p = plan.plan(busy_start, startup=Startup(2), n_requests=1000)
    first = replicas_needed(float(p.rate[0]), p.replica_rate)
    chase = p.rows[1].result
    assert chase.ready[0] == first
    assert p.hpa_run.ready[0] == min(max(first, p.min_replicas), p.max_replicas)
    # the two capacities differ on this log, so a replay started from the other one is seen
    assert replicas_needed(float(p.rate[0]), ReplicaRate(p.replica.max_rate_rps)) < first


@pytest.mark.slow
@pytest.mark.parametrize("lam", [20.0, 50.0, 100.0])
def test_the_hpa_on_steady_traffic_stays_between_mu_star_and_the_target(lam):
    """On constant traffic the HPA written for L* keeps each replica at no more than μ* and, on
    average, near ρ*μ*: λ/μ* ≤ N and mean N within 20 % of λ/(ρ*μ*). It need not settle: near
    capacity a replica's requests in flight grow faster than its load (W rises), so one replica
    less reads more than 10 % over L* and one more reads more than 10 % under it, and the
    proportional rule ⌈N · metric/L*⌉ cycles between them (at 50 req/s: 7 to 10 replicas)."""
    log = logs.read_trace(SAMPLE_LOG)
    point = plan.operating_point(log, n_requests=2000)
    replica = plan.measured_replica(ReplicaModel(), log.length_mix(), point, n_requests=2000)
    # measured: a replica holding L* completes about ρ*μ* requests a second (two runs of the
    # discrete replica, the operating point's and the measurement's, agree within their noise)
    held = float(replica.completion_rate(point.concurrency_target))
    assert held == pytest.approx(point.rate, rel=0.05)
    hpa = manifest.hpa_manifest("x", point.concurrency_target, min_replicas=1, max_replicas=60)
    run = plan.hpa_replay(
        np.full(90, lam),
        hpa,
        replica,
        initial=math.ceil(lam / point.rate),
        startup=Startup(2),
        signal="concurrency",
    )
    settled = run.ready[3600:]
    assert settled.min() >= lam / point.mu_star
    # within 30 %: at 50 req/s the cycle runs 8.5 replicas on average against the 6.6 of
    # λ/(ρ*μ*), the requests-in-flight signal reading high near capacity (issue #31)
    assert settled.mean() == pytest.approx(lam / point.rate, rel=0.3)


# on the vendored week, the start-up at which chasing leaves a minute short and the schedule
# learned from earlier days does not (16 min: chase covers every minute; 20: both fall short)
SCHEDULE_WINS_STARTUP_MIN = 18


@pytest.fixture(scope="module")
def scheduled_week():
    return plan.plan(
        logs.read_rate_series(WEEK),
        startup=Startup(SCHEDULE_WINS_STARTUP_MIN),
        n_requests=2000,
        sizing=plan.Sizing(short_budget=0),  # every minute covered: the schedule is cheapest
    )


@pytest.mark.slow
def test_the_keda_object_read_back_reproduces_its_replay_and_holds_its_minimums(
    scheduled_week, tmp_path
):
    p = scheduled_week
    assert p.recommended.policy.forecast and p.keda_run is not None
    f = tmp_path / "keda.yaml"
    f.write_text(manifest.to_yaml(p.keda))
    replay = plan.keda_replay(
        p.rate,
        f.read_text(),
        p.replica,
        initial=int(p.hpa_run.ready[0]),
        startup=Startup(SCHEDULE_WINS_STARTUP_MIN),
        start_s=p.start_s,
        signal=p.scaling.signal,
    )
    windows = manifest.schedule_from_scaled_object(yaml.safe_load(f.read_text()))
    assert windows and all(n <= p.max_replicas for _, _, n in windows)
    for start, _end, n in windows:  # two minutes into each window the fleet pays for n or more
        minute = (start + 2 - 4 * 1440) % (7 * 1440)  # minutes of the week from Sunday; the
        assert replay.paid[minute * 60] >= n, (start, n)  # series starts on a Thursday
    # the minimums cost hours and buy the seconds the HPA alone left waiting
    assert replay.paid_hours > p.hpa_run.paid_hours
    assert replay.queued_seconds <= p.hpa_run.queued_seconds


def test_the_planner_has_no_running_example_default():
    """A reader's traffic is never priced with the book's 2 € and 320-token answers."""
    with pytest.raises(TypeError, match="pricing"):
        plan.replay(np.full(60, 1.0), ReplicaRate(8.0, 0.8))
    with pytest.raises(
        TypeError, match="missing 1 required positional argument: 'tokens_per_request'"
    ):
        Pricing(2.0)


def test_a_replica_of_two_gpus_pays_both_and_its_bill_splits_by_phase(sample):
    two = replace(ReplicaModel(), gpus=2)
    p = plan.plan(sample, two, price_per_gpu_hour=1.5, n_requests=1000)
    assert p.price_per_replica_hour == 3.0
    for r in p.rows:
        assert r.priced.cost == pytest.approx(r.result.paid_hours * 2 * 1.5)
    p_in, p_out = p.phase_prices
    served = p.recommended.priced.tokens / p.point.mean_output
    bill = (p_in * served * p.point.mean_prompt + p_out * p.recommended.priced.tokens) / 1e6
    assert bill == pytest.approx(p.recommended.priced.cost)
    assert p_out / p_in == pytest.approx(p.phase_s[1] / p.phase_s[0])
    with pytest.raises(ValueError, match="price_per_gpu_hour"):
        plan.plan(sample, replace(two, price_per_gpu_hour=None), n_requests=1000)


@pytest.mark.slow
def test_a_target_too_small_to_hold_becomes_the_kv_cache_tokens():
    """Prompts of 2,000 tokens answered in 28 on Llama-3-8B on an A100 (the Azure code mix): a
    request stays under a second, L* is about 1, and an HPA on whole requests would read 0 or 1.
    The plan targets the tokens a replica holds in its KV cache instead, and its HPA then sees
    the load: it changes size with the traffic, which on this hour it did not before."""
    log = logs.read_trace(SAMPLE / "code_sample.csv")
    model = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb")
    p = plan.plan(log, model, n_requests=2000, signal="concurrency")
    assert p.point.concurrency_target < plan.MIN_HOLDABLE_CONCURRENCY
    assert p.scaling.signal == "kv_tokens" and "below 2" in p.scaling.why
    metric = p.hpa["spec"]["metrics"][0]["pods"]
    assert metric["metric"]["name"] == "kv_cache_tokens"
    # a request in flight holds at most its prompt and answer (and nothing while it waits), so
    # the target sits below ℓ × (mean prompt + mean answer) at the ℓ the measured replica holds
    # at ρ*μ*, and above half ℓ × the mean prompt (time spent waiting, short prompts first)
    tokens = p.scaling.target
    ell = p.replica.in_flight_at(p.point.rate)
    low = 0.5 * ell * p.point.mean_prompt
    high = 1.05 * ell * (p.point.mean_prompt + p.point.mean_output)
    assert low <= tokens <= high
    assert manifest.parse_quantity(metric["target"]["averageValue"]) == pytest.approx(tokens, 1e-3)
    assert p.hpa_run.scale_changes >= 2  # up with the hour's traffic and down again


def test_max_replicas_is_twice_the_busiest_minutes_fleet_by_hand():
    """ρ*μ* = 0.8 × 2.5 = 2 req/s a replica: the busiest minute, 9.5 req/s, needs ⌈4.75⌉ = 5,
    and the bound is twice that, 10; flat traffic of 4 req/s needs 2, bound 4 (at least one
    above the floor: an HPA that could never move would be no HPA); a bound below the quietest
    minute's fleet is refused, naming the floor."""
    assert plan.max_replicas_for(np.array([1.0, 9.5, 3.0]), ReplicaRate(2.5, 0.8), 1, None) == 10
    assert plan.max_replicas_for(np.array([4.0, 4.0]), ReplicaRate(2.5, 0.8), 2, None) == 4
    assert plan.max_replicas_for(np.array([4.0, 4.0]), ReplicaRate(2.5, 0.8), 3, None) == 4
    assert plan.max_replicas_for(np.array([4.0, 4.0]), ReplicaRate(2.5, 0.8), 2, 7) == 7
    with pytest.raises(ValueError, match=r"max_replicas must be >= 2 .*got 1"):
        plan.max_replicas_for(np.array([4.0, 4.0]), ReplicaRate(2.5, 0.8), 2, 1)


@pytest.mark.slow
def test_a_surge_against_the_start_up_the_rate_signal_holds_what_it_needs():
    """A surge of 7 times the quiet rate for ten minutes against a 10-minute start-up. With
    requests in flight the ready replica reports the backlog while the others start, and the
    HPA asks for every pod its bound (twice the busiest minute's fleet) allows; they arrive
    after the surge and are paid through the scale-down window. With requests completed a
    second, the plan's default, the backlog is not in the signal: the fleet stays within the
    busiest minute's, and pays no more than keeping that fleet on."""
    mu = plan.operating_point(lg.AZURE_CONVERSATION, n_requests=2000).mu_star
    rate = np.r_[np.full(10, 0.5 * mu), np.full(10, 3.5 * mu), np.full(30, 0.5 * mu)]
    p = plan.plan(rate, startup=Startup(10), n_requests=2000)
    busiest = math.ceil(3.5 / p.point.target_utilization)  # ⌈λ_max/(ρ*μ*)⌉ = 5
    assert p.max_replicas == 2 * busiest == p.hpa["spec"]["maxReplicas"]
    assert p.keda["spec"]["maxReplicaCount"] == 2 * busiest
    always_on = p.rows[0]
    assert always_on.policy.fixed == busiest
    assert p.scaling.signal == "completion_rate"
    assert p.hpa_run.paid.max() <= busiest
    assert p.hpa_run.paid_hours <= always_on.priced.paid_hours
    in_flight = plan.plan(rate, startup=Startup(10), n_requests=2000, signal="concurrency")
    assert in_flight.hpa_run.paid.max() == 2 * busiest  # the surge asked for all of them
    assert in_flight.hpa_run.paid_hours > 1.2 * p.hpa_run.paid_hours


FULL_CODE = (
    Path(__file__).resolve().parents[2]
    / "shared/data/azure-llm-inference-2023/AzureLLMInferenceTrace_code.csv"
)


def _code_traffic(which: str):
    """(traffic, lengths): the vendored sample (every 6th request of the hour) at 6 times its
    rate with its own mix, or the full trace."""
    if which == "full trace":
        if not FULL_CODE.exists():
            pytest.skip("the full code trace is in ../shared, not in the repository")
        return logs.read_trace(FULL_CODE), None
    sample = logs.read_trace(SAMPLE / "code_sample.csv")
    return sample.rate_per_minute() * 6, sample


@pytest.mark.slow
@pytest.mark.parametrize("which", ["sample at 6x", "full trace"])
def test_on_the_code_trace_the_hpa_pays_within_a_quarter_of_the_chase(which):
    """The issue's check, Llama-3-8B on an A100 80GB: the HPA replayed second by second on
    what the plan writes pays within 25 % of the minute-level chase's replica-hours, although
    the chase leaves more than a tenth of the requests beyond capacity, which the HPA serves
    late rather than not at all."""
    traffic, lengths = _code_traffic(which)
    model = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb")
    p = plan.plan(traffic, model, lengths=lengths)
    chase = p.rows[1]
    assert chase.policy.name.startswith("chase") and chase.result.excess_fraction > 0.1
    assert abs(p.hpa_run.paid_hours / chase.result.paid_hours - 1) <= 0.25
    served = p.hpa_run.served.sum()
    assert served == pytest.approx(p.hpa_run.rate.sum(), rel=0.01)


def test_the_schedule_is_learned_on_the_zones_hours_and_its_cron_fires_there():
    """A burst every day at 14:00-15:00 in Rome, which in January is UTC+1 (13:00 UTC): with
    --timezone Europe/Rome the schedule's busy hour is 14 and the cron trigger names the zone,
    starting one start-up before 14:00; read in UTC the same log peaks at 13. A log across
    Rome's change to summer time (2024-03-31, 01:00 UTC) is flagged."""
    from datetime import datetime

    start = datetime(2024, 1, 8, tzinfo=UTC).timestamp()
    rate = np.full(3 * 1440, 4.0)
    for d in range(3):
        rate[d * 1440 + 13 * 60 : d * 1440 + 14 * 60] = 60.0
    kw = dict(start_s=start, startup=Startup(10), precision=None, n_requests=2000)
    rome = plan.plan(rate, timezone="Europe/Rome", **kw)
    utc = plan.plan(rate, **kw)
    assert rome.timezone == "Europe/Rome" and not rome.offset_changes
    assert int(np.argmax(rome.schedule)) == 14 and int(np.argmax(utc.schedule)) == 13
    assert rome.start_s == start + 3600 and utc.start_s == start
    obj = manifest.keda_scaled_object(
        "llm", 5.0, min_replicas=1, max_replicas=20, schedule=rome.schedule, lead_min=10,
        timezone="Europe/Rome",
    )  # fmt: skip
    cron = [t["metadata"] for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    assert [(c["timezone"], c["start"], c["end"]) for c in cron] == [
        ("Europe/Rome", "50 13 * * *", "0 15 * * *")
    ]
    spring = datetime(2024, 3, 30, tzinfo=UTC).timestamp()
    assert plan.plan(rate, timezone="Europe/Rome", **{**kw, "start_s": spring}).offset_changes

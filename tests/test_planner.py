"""The planner past the operating point: the policies replayed on a reader's traffic, the
schedule learned from history, the autoscaler's behavior and manifests, and the command.

Expected values are worked by hand from the definitions (the busiest minute of each clock hour,
⌈Δλ/(ρ*μ*)⌉, the API's field bounds), not read from the code's output.
"""

import json
import math
import re
import struct
from pathlib import Path

import jsonschema
import kubernetes_validate
import numpy as np
import pytest
import yaml

from replicaplan.autoscalers import manifest
from replicaplan.faces.cli import main
from replicaplan.planner import plan
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic import loadgen as lg
from replicaplan.traffic.synthetic import noisy_days

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_LOG = ROOT / "data/azure-llm-inference-2023/conv_sample.csv"
WEEK = ROOT / "data/synthetic-week/rates.csv"
K8S = "1.33"  # the Kubernetes version whose OpenAPI schema the manifests are checked against


def three_days():
    """Day 0 at 1 req/s with a 5 req/s minute at 10:07, day 1 at 2 req/s with 9 at 10:30,
    day 2 at 3 req/s with 1 at 10:00 (a quiet hour's busiest minute is the plain rate)."""
    rate = np.concatenate([np.full(1440, 1.0), np.full(1440, 2.0), np.full(1440, 3.0)])
    rate[10 * 60 + 7] = 5.0
    rate[1440 + 10 * 60 + 30] = 9.0
    return rate


def test_the_learned_forecast_uses_only_earlier_days():
    fc = plan.learned_forecast(three_days())
    assert np.all(fc[:1440] == 0)  # day 0 has no history
    assert fc[1440 + 10 * 60] == 5.0 and fc[1440 + 9 * 60] == 1.0  # day 1 learns from day 0
    assert fc[2880 + 10 * 60 + 59] == (5.0 + 9.0) / 2 and fc[2880 + 3 * 60] == (1 + 2) / 2


def test_the_schedule_is_placed_on_the_clock():
    # the log starts at 12:00 UTC: its minute 0 belongs to hour 12 of its first day
    rate = np.zeros(2 * 1440)
    rate[0] = 20.0  # 12:00 on day 0
    rate[1440] = 12.0  # 12:00 on day 1
    assert plan.days_covered(rate, start_s=12 * 3600) == 3
    table = plan.schedule(rate, 8.0, 0.8, start_s=12 * 3600)
    # hour 12 seen on days 0 and 1 (mean 16 req/s): ⌈16/6.4⌉ = 3; every other hour: 0
    assert table[12] == 3 and sum(table) == 3
    fc = plan.learned_forecast(rate, start_s=12 * 3600)
    assert fc[1440] == 20.0  # day 1's 12:00 hour learned from day 0's


def test_schedule_by_hand():
    table = plan.schedule(three_days(), 8.0, 0.8)
    # hour 10: busiest minutes 5, 9, 3 → mean 17/3 → ⌈(17/3)/6.4⌉ = 1; others: mean 2 → 1
    assert table == [1] * 24
    table = plan.schedule(three_days() * 4, 8.0, 0.8)
    assert table[10] == math.ceil(4 * 17 / 3 / 6.4) == 4 and table[0] == math.ceil(8 / 6.4) == 2


def test_the_replay_has_a_schedule_row_only_for_two_days_or_more():
    one = plan.replay(three_days()[:1440], 8.0)
    assert len(one) == 3
    rows = plan.replay(three_days(), 8.0, startup_min=8)
    assert len(rows) == 4 and rows[3].policy.forecast
    chase, sched = rows[1].result, rows[3].result
    # the schedule cannot act before the first minute whose look-ahead reaches day 1
    assert np.array_equal(chase.ready[: 1440 - 8], sched.ready[: 1440 - 8])


def test_ramp_and_step_reserves_by_hand():
    ramp = np.arange(0, 60.0, 1.0)  # +1 req/s every minute
    # over a 10-minute start-up the ramp adds 10 req/s: ⌈10/6.4⌉ = 2; one minute's step: 1
    assert plan.steepest_ramp_reserve(ramp, 8.0, 0.8, 10) == 2
    assert plan.largest_step_reserve(ramp, 8.0, 0.8) == 1
    assert plan.spares_for(ramp, 8.0, 0.8, 10) == 2
    assert plan.steepest_ramp_reserve(ramp, 8.0, 0.8, 0) == 0
    step = np.r_[np.full(30, 2.0), np.full(30, 30.0)]
    assert plan.spares_for(step, 8.0, 0.8, 10) == math.ceil(28 / 6.4) == 5


@pytest.mark.parametrize("startup, window_s", [(3, 300), (12, 720)])
def test_behavior_from_the_start_up_and_the_logs_steps(startup, window_s):
    rate = np.r_[np.full(30, 2.0), np.full(30, 30.0), np.full(30, 2.0)]
    up, down = plan.behavior(rate, 8.0, 0.8, startup)
    k = math.ceil(28 / 6.4)  # 5 replicas for the rise and for the fall
    assert [(p.kind, p.value, p.period_s) for p in up.policies] == [
        ("Pods", k, 15),
        ("Percent", 100, 15),
    ]
    assert up.stabilization_s == 0
    assert [(p.kind, p.value, p.period_s) for p in down.policies] == [("Pods", k, 60)]
    assert down.stabilization_s == window_s  # max(5 min, T_start)
    calm = np.full(30, 2.0)
    up, down = plan.behavior(calm, 8.0, 0.8, 3)
    assert up.policies[0].value == 4 and down.policies[0].value == 1  # the floors


@pytest.fixture(scope="module")
def two_days():
    rate = noisy_days(2, noise=0.1, seed=3).ravel()
    return plan.plan(rate, startup_min=15, n_requests=2000)


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
        plan.fluid_replica(ReplicaModel(), two_days.point),
        startup_min=15,
    )
    assert run.paid.min() >= 2 and run.ready.max() <= 9
    called = np.diff(run.paid.astype(int))
    per_minute = [called[i : i + 60].clip(min=0).sum() for i in range(0, called.size - 60, 60)]
    assert max(per_minute) <= 3, max(per_minute)
    assert run.scale_changes > 4  # it followed the two days up and down


def test_the_hpa_passes_the_kubernetes_schema_and_a_broken_one_does_not(two_days):
    assert kubernetes_validate.validate(two_days.hpa, K8S, strict=True)
    broken = yaml.safe_load(manifest.to_yaml(two_days.hpa))
    broken["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] = "480"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S, strict=True)
    broken = yaml.safe_load(manifest.to_yaml(two_days.hpa))
    broken["spec"]["minReplica"] = 3  # a misspelt field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S, strict=True)


# The constraints of KEDA's ScaledObject CRD (keda.sh_scaledobjects.yaml) on the fields the
# planner writes: scaleTargetRef.name and triggers required, each trigger a type and string
# metadata, integer replica counts; the behavior is the HPA's and is checked by the HPA schema.
KEDA_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "spec": {
            "type": "object",
            "required": ["scaleTargetRef", "triggers"],
            "additionalProperties": False,
            "properties": {
                "scaleTargetRef": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}},
                },
                "minReplicaCount": {"type": "integer", "minimum": 0},
                "maxReplicaCount": {"type": "integer", "minimum": 1},
                "advanced": {"type": "object"},
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["type", "metadata"],
                        "properties": {
                            "type": {"enum": ["prometheus", "cron"]},
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            "metadata": {
                                "type": "object",
                                "additionalProperties": {"type": "string"},
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_the_keda_object_matches_its_schema_and_the_hpa(two_days):
    keda, hpa = two_days.keda, two_days.hpa
    jsonschema.validate(keda, KEDA_SCHEMA)
    spec = keda["spec"]
    behavior = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", **hpa}
    behavior["spec"] = {
        **hpa["spec"],
        "behavior": spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"],
    }
    assert kubernetes_validate.validate(behavior, K8S, strict=True)
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (
        hpa["spec"]["minReplicas"],
        hpa["spec"]["maxReplicas"],
    )
    (prom,) = [t for t in spec["triggers"] if t["type"] == "prometheus"]
    target = manifest.parse_quantity(hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"])
    assert float(prom["metadata"]["threshold"]) == target
    assert prom["metricType"] == "AverageValue"


def test_cron_triggers_by_hand():
    schedule = [2] * 9 + [3] + [5, 5] + [2] * 12
    obj = manifest.keda_scaled_object(
        "llm", 30, min_replicas=2, max_replicas=10, schedule=schedule, lead_min=8
    )
    crons = [t["metadata"] for t in obj["spec"]["triggers"] if t["type"] == "cron"]
    # 09:00–09:59 wants 3, started 8 min early; 10:00–11:59 wants 5
    assert [(c["start"], c["end"], c["desiredReplicas"]) for c in crons] == [
        ("52 8 * * *", "0 10 * * *", "3"),
        ("52 9 * * *", "0 12 * * *", "5"),
    ]
    midnight = manifest.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=3, schedule=[0] * 23 + [4], lead_min=30
    )
    (cron,) = [t["metadata"] for t in midnight["spec"]["triggers"] if t["type"] == "cron"]
    assert (cron["start"], cron["end"], cron["desiredReplicas"]) == (
        "30 22 * * *",  # 23:00 less the 30-minute start-up
        "0 0 * * *",
        "3",
    )
    allday = manifest.keda_scaled_object(
        "llm", 30, min_replicas=1, max_replicas=9, schedule=[4] * 24
    )
    (cron,) = [t["metadata"] for t in allday["spec"]["triggers"] if t["type"] == "cron"]
    assert cron["start"] != cron["end"]  # KEDA refuses equal start and end
    with pytest.raises(ValueError, match="24 hourly"):
        manifest.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=9, schedule=[1] * 23)
    with pytest.raises(ValueError, match="prometheus"):
        manifest.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=9, prometheus="x")
    assert kubernetes_validate  # keep the import used when the schema tests are deselected


# ------------------------------------------------------------------ reading traffic
def test_chunks_read_as_one(monkeypatch, tmp_path):
    whole = lg.read_trace(SAMPLE_LOG)
    seen = []
    monkeypatch.setattr(lg, "CHUNK_ROWS", 100)
    chunked = lg.read_trace(SAMPLE_LOG, progress=seen.append)
    for name in ("arrival", "prompt", "output"):
        assert np.array_equal(getattr(whole, name), getattr(chunked, name))
    assert whole.start == chunked.start > 1.7e9  # 2023-11-16, on the epoch's clock
    assert len(seen) == math.ceil(3228 / 100) and seen == sorted(seen) and seen[-1] == 1.0
    # errors across a chunk's edge name the right row
    f = tmp_path / "t.csv"
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n1,2,3\n2,2,3\n1.5,2,3\n")
    monkeypatch.setattr(lg, "CHUNK_ROWS", 2)
    with pytest.raises(ValueError, match="row 4.*earlier"):
        lg.read_trace(f)
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n1,2,3\n2,2,3\n3,2,x\n")
    with pytest.raises(ValueError, match="row 4.*unreadable"):
        lg.read_trace(f)
    f.write_text(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 10:00:00,2,3\nnot a date,2,3\n"
    )
    with pytest.raises(ValueError, match="row 3.*unreadable"):
        lg.read_trace(f)


@pytest.mark.parametrize(
    "text, match",
    [
        ("minute,rate\n0,1\n", "missing column.*rate_rps"),
        ("minute,rate_rps\n0,1\n2,1\n", "row 3: minute must be 1"),
        ("minute,rate_rps\n0,1\n1,-2\n", "row 3: rate_rps must be >= 0"),
        ("minute,rate_rps\n0,abc\n", "row 2: unreadable"),
        ("minute,rate_rps\n0,nan\n", "row 2: rate_rps"),
        ("minute,rate_rps\n", "no minutes"),
    ],
)
def test_bad_rate_series(tmp_path, text, match):
    f = tmp_path / "rates.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=match) as err:
        lg.read_rate_series(f)
    assert "rates.csv" in str(err.value)


def test_the_vendored_week_is_what_its_script_writes():
    import runpy

    script = runpy.run_path(str(ROOT / "tools/synthetic_week.py"))
    assert WEEK.read_text() == script["rows"]()


# ------------------------------------------------------------------ the command
def test_plan_on_a_rate_series_schedules_and_reports(capsys, tmp_path):
    out = tmp_path / "report"
    args = ["plan", "--rates", str(WEEK), "--startup", "15", "--report", str(out), "--json"]
    assert main(args) == 0
    got = json.loads(capsys.readouterr().out)
    names = [p["policy"] for p in got["policies"]]
    assert len(names) == 4 and "schedule" in names[3]
    assert len(got["schedule_utc"]) == 24 and max(got["schedule_utc"]) > got["min_replicas"]
    # the week's afternoon hump outruns a 15-minute start-up; the schedule starts replicas early
    chase, sched = got["policies"][1], got["policies"][3]
    assert sched["uncovered_minutes"] < chase["uncovered_minutes"]
    assert got["recommended"]["policy"] == names[3]
    crons = [t for t in got["keda"]["spec"]["triggers"] if t["type"] == "cron"]
    assert crons and all(int(t["metadata"]["desiredReplicas"]) > got["min_replicas"] for t in crons)
    assert sorted(p.name for p in out.iterdir()) == [
        "fleet.png",
        "hpa.yaml",
        "keda.yaml",
        "report.md",
        "startup.png",
    ]
    png = (out / "fleet.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24])[0] >= 800
    report = (out / "report.md").read_text()
    assert f"{got['mu_star_rps']:.2f} req/s" in report and "](fleet.png)" in report
    assert yaml.safe_load((out / "hpa.yaml").read_text()) == got["hpa"]


def test_plan_writes_an_html_report(capsys, tmp_path):
    out = tmp_path / "r"
    args = ["plan", "--log", str(SAMPLE_LOG), "--report", str(out), "--report-format", "html"]
    assert main(args) == 0
    page = (out / "index.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and '<img src="fleet.png"' in page
    assert "conv_sample.csv" in capsys.readouterr().out


def test_a_replica_by_name_and_one_fitted_to_its_own_timings_agree(capsys):
    sheet = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb", batch=64)
    tpot = [f"{b},{c},{float(sheet.step_s(b, b * c))!r}" for b, c in ((1, 500), (64, 2000))]
    ttft = [f"{p},{float(sheet.prefill_s(p))!r}" for p in (256, 2048)]
    base = ["plan", "--log", str(SAMPLE_LOG), "--json", "--model", "llama-3-8b"]
    assert main([*base, "--gpu", "a100-80gb"]) == 0
    by_name = json.loads(capsys.readouterr().out)
    points = [a for x in tpot for a in ("--tpot-point", x)] + [
        a for x in ttft for a in ("--ttft-point", x)
    ]
    assert main([*base, "--gpu", "a100-80gb", *points]) == 0
    fitted = json.loads(capsys.readouterr().out)
    assert fitted["mu_star_rps"] == pytest.approx(by_name["mu_star_rps"], rel=1e-3)
    # and the A100 replica is not the running example's
    assert main(["plan", "--log", str(SAMPLE_LOG), "--json"]) == 0
    example = json.loads(capsys.readouterr().out)
    assert abs(example["mu_star_rps"] - by_name["mu_star_rps"]) > 0.5


def test_a_gpu_spelled_out_equals_the_named_one(capsys):
    base = ["plan", "--log", str(SAMPLE_LOG), "--json", "--model", "llama-3-8b", "--gpu"]
    assert main([*base, "a100-80gb"]) == 0
    named = json.loads(capsys.readouterr().out)
    spec = "memory_bytes=80e9,bandwidth=2.039e12,flops=312e12,link_bandwidth=300e9"
    assert main([*base, spec]) == 0
    assert json.loads(capsys.readouterr().out)["mu_star_rps"] == named["mu_star_rps"]


def short_log(tmp_path):
    f = tmp_path / "short.csv"
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n0,100,50\n60,100,50\n150,100,50\n")
    return ["--log", str(f)]


def zero_rates(tmp_path):
    f = tmp_path / "zero.csv"
    f.write_text("minute,rate_rps\n" + "".join(f"{m},0\n" for m in range(30)))
    return ["--rates", str(f)]


@pytest.mark.parametrize(
    "extra, match",
    [
        (short_log, "3 minute.*shorter than the scale-down window \\(8 min"),
        (zero_rates, "no requests"),
        (["--model", "llama-3-70b", "--gpu", "a100-80gb"], "do not fit"),
        (["--tpot-slo", "0.001"], "tpot_slo_s=0.001.*no load meets them"),
        (["--model", "llama-3-8b", "--gpu", "a100"], "--gpu: unknown name 'a100'"),
        (["--model", "llama-3-8b", "--gpu", "memory_bytes=80e9,bandwidth=x"], "bandwidth must be"),
        (["--model", "llama-3-8b", "--gpu", "memory_bytes=-1"], "memory_bytes must be > 0"),
        (["--gpu", "a100-80gb"], "--model is required"),
        (["--model", "llama-3-8b", "--tpot-point", "1,2"], "--tpot-point: expected 3"),
        (["--model", "llama-3-8b", "--tpot-point", "1,2,0.01"], "tpot needs two or more"),
        (["--startup", "-1"], "startup_min"),
        (["--name", "My_LLM"], "name must be a DNS-1123 name"),
        (["--metric", "in-flight"], "metric_name must match"),
        (["--price", "0"], "price_per_hour"),
    ],
)
def test_bad_plans_exit_2_and_write_nothing(capsys, tmp_path, extra, match):
    out = tmp_path / "out"
    out.mkdir()
    extra = extra(tmp_path) if callable(extra) else extra
    traffic = [] if "--log" in extra or "--rates" in extra else ["--log", str(SAMPLE_LOG)]
    files = ["--manifest", str(out / "h.yaml"), "--keda", str(out / "k.yaml")]
    args = ["plan", *traffic, *extra, *files, "--report", str(out / "report")]
    assert main(args) == 2
    assert re.search(match, capsys.readouterr().err)
    assert list(out.iterdir()) == []


def test_a_report_directory_in_use_is_refused(capsys, tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    args = ["plan", "--log", str(SAMPLE_LOG), "--manifest", str(tmp_path / "h.yaml")]
    assert main([*args, "--report", str(tmp_path)]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("lam", [20.0, 50.0, 100.0])
def test_the_hpa_on_steady_traffic_settles_between_mu_star_and_the_target(lam):
    """On constant traffic the HPA written for L* settles where each replica carries no more
    than μ* and, within its 10 % tolerance band, about ρ*μ*: λ/μ* ≤ N ≤ ⌈λ/(ρ*μ*)⌉ + 1."""
    point = plan.operating_point(lg.read_trace(SAMPLE_LOG), n_requests=2000)
    replica = plan.fluid_replica(ReplicaModel(), point)
    # calibrated: a replica holding L* completes ρ*μ* requests a second
    assert float(replica.completion_rate(point.concurrency_target)) == pytest.approx(point.rate)
    hpa = manifest.hpa_manifest("x", point.concurrency_target, min_replicas=1, max_replicas=60)
    run = plan.hpa_replay(np.full(90, lam), hpa, replica, startup_min=2)
    settled = np.unique(run.ready[3600:])
    assert settled.size == 1
    n = int(settled[0])
    assert lam / point.mu_star <= n <= math.ceil(lam / point.rate) + 1


@pytest.fixture(scope="module")
def scheduled_week():
    return plan.plan(lg.read_rate_series(WEEK), startup_min=15, n_requests=2000)


def test_the_keda_object_read_back_reproduces_its_replay_and_holds_its_minimums(
    scheduled_week, tmp_path
):
    p = scheduled_week
    assert p.recommended.policy.forecast and p.keda_run is not None
    f = tmp_path / "keda.yaml"
    f.write_text(manifest.to_yaml(p.keda))
    fluid = plan.fluid_replica(ReplicaModel(), p.point)
    replay = plan.keda_replay(p.rate, f.read_text(), fluid, startup_min=15, start_s=p.start_s)
    windows = manifest.schedule_from_scaled_object(yaml.safe_load(f.read_text()))
    assert windows and all(n <= p.max_replicas for _, _, n in windows)
    for start, _end, n in windows:  # two minutes into each window the fleet pays for n or more
        for day in range(7):
            t = (day * 1440 + start + 2) * 60
            assert replay.paid[t] >= n, (day, start, n)
    # the minimums cost hours and buy the seconds the HPA alone left waiting
    assert replay.paid_hours > p.hpa_run.paid_hours
    assert replay.queued_seconds <= p.hpa_run.queued_seconds


def test_cron_expressions_read_back():
    obj = manifest.keda_scaled_object(
        "llm",
        30,
        min_replicas=1,
        max_replicas=9,
        schedule=[1] * 10 + [4] * 2 + [1] * 12,
        lead_min=20,
    )
    assert manifest.schedule_from_scaled_object(obj) == [(9 * 60 + 40, 12 * 60, 4)]
    obj["spec"]["triggers"][1]["metadata"]["start"] = "*/5 9 * * *"
    with pytest.raises(ValueError, match="start must be a daily cron"):
        manifest.schedule_from_scaled_object(obj)
    obj["spec"]["triggers"][1]["metadata"]["timezone"] = "Europe/Rome"
    with pytest.raises(ValueError, match="only Etc/UTC"):
        manifest.schedule_from_scaled_object(obj)


def test_startup_sensitivity_on_a_step_by_hand():
    """2 → 10 req/s at once (μ* = 8, ρ* = 0.8): chasing is short for exactly one start-up."""
    rate = np.r_[np.full(60, 2.0), np.full(30, 10.0), np.full(30, 2.0)]
    sens = plan.startup_sensitivity(rate, 8.0, [0, 3, 8])
    assert list(sens.per_million) == ["always on", "chase", "spares"]  # one day: no schedule
    assert sens.uncovered["chase"].tolist() == [0, 3, 8]
    assert sens.uncovered["spares"].tolist() == [0, 0, 0]  # ⌈8/6.4⌉ = 2 spares cover the step
    assert sens.first_short("chase") == 3 and sens.first_short("spares") is None
    # always on does not depend on the start-up; chasing pays a little more with a slower start
    assert np.ptp(sens.per_million["always on"]) == 0
    with pytest.raises(ValueError, match="startups"):
        plan.startup_sensitivity(rate, 8.0, [])


def test_a_dated_log_of_several_days_puts_its_schedule_on_the_clock(capsys, tmp_path):
    """A log from 12:00 UTC over two and a half days, busy from 14:00 to 16:00 UTC each day:
    the schedule it writes asks for more replicas in those two clock hours than in any other."""
    rng = np.random.default_rng(5)
    start = np.datetime64("2024-03-04T12:00:00", "us")
    seconds = 60 * 3600
    clock_h = (12 + np.arange(seconds) / 3600) % 24
    rate = np.where((clock_h >= 14) & (clock_h < 16), 30.0, 1.0)
    counts = rng.poisson(rate)
    t = np.repeat(np.arange(seconds), counts) + rng.uniform(0, 1, counts.sum())
    t.sort()
    stamps = (start + (t * 1e6).astype("timedelta64[us]")).astype(str)
    p, o = lg.AZURE_CONVERSATION.sample(t.size, rng)
    log = tmp_path / "days.csv"
    log.write_text(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        + "".join(f"{s.replace('T', ' ')},{a},{b}\n" for s, a, b in zip(stamps, p, o, strict=True))
    )
    assert main(["plan", "--log", str(log), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    table = got["schedule_utc"]
    busy = min(table[14], table[15])
    assert busy > max(n for h, n in enumerate(table) if h not in (14, 15))
    per = got["operating_rate_rps"]
    assert busy == math.ceil(30 / per) or busy == math.ceil(30 / per) + 1  # Poisson peaks
    assert len(got["policies"]) == 4


def test_names_the_api_server_would_refuse():
    for bad in ("", "LLM", "llm_", "-llm", "a" * 254):
        with pytest.raises(ValueError, match="DNS-1123"):
            manifest.hpa_manifest(bad, 30)
    manifest.hpa_manifest("llm-8b.prod", 30)  # dots and dashes inside are fine
    with pytest.raises(ValueError, match="deployment must be"):
        manifest.hpa_manifest("llm", 30, deployment="Serve")
    with pytest.raises(ValueError, match="metric_name"):
        manifest.keda_scaled_object("llm", 30, min_replicas=1, max_replicas=2, metric_name="9x")


def test_a_rate_series_takes_the_length_mix_of_another_log(capsys, tmp_path):
    code = ROOT / "data/azure-llm-inference-2023/code_sample.csv"
    day = tmp_path / "day.csv"  # the week's first day is enough here
    day.write_text("".join(WEEK.read_text().splitlines(keepends=True)[: 1 + 1440]))
    assert main(["plan", "--rates", str(day), "--json"]) == 0
    conv = json.loads(capsys.readouterr().out)
    assert main(["plan", "--rates", str(day), "--lengths", str(code), "--json"]) == 0
    with_code = json.loads(capsys.readouterr().out)
    mix = lg.read_trace(code)
    assert with_code["mean_output_tokens"] == pytest.approx(mix.output.mean())
    # code requests: long prompts, short answers; a different mu* from the conversation mix
    assert with_code["mean_prompt_tokens"] > conv["mean_prompt_tokens"]
    assert abs(with_code["mu_star_rps"] - conv["mu_star_rps"]) > 0.2

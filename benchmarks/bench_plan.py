"""Speed and memory of the planner: ``replicaplan plan`` on the full Azure conversation log and on
a synthetic week of 10 million requests.

Targets (issue "Plan your own fleet", tightened by "One package a maintainer can see"): the full
conversation log (19,366 requests, one hour) in ≤ 1.5 s; a week of 10 million requests in
≤ 15 s and ≤ 4 GiB on 2 cores. Both are timed as a
user runs them, the command in a fresh process (imports included), its peak memory read from
the operating system. The peer is the plain way of reading a log, the csv module row by row
with datetime parsing, against the planner's numpy chunks on the same file. Run: make bench
"""

import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np

from replicaplan.traffic.loadgen import AZURE_CONVERSATION
from replicaplan.traffic.logs import read_rate_series, read_trace

ROOT = Path(__file__).resolve().parents[1]
FULL = ROOT.parent / "shared/data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv"
WEEK = ROOT / "data/synthetic-week/rates.csv"
N_WEEK = 10_000_000


def synthetic_week(path: Path, n: int = N_WEEK, seed: int = 0) -> int:
    """A request log of about ``n`` requests following the vendored week's per-minute rates:
    Poisson counts per minute, uniform times within the minute, lengths from the Azure mix."""
    rng = np.random.default_rng(seed)
    rate = read_rate_series(WEEK)
    counts = rng.poisson(rate * 60 * n / (rate.sum() * 60))
    start = np.datetime64("2024-03-04T00:00:00", "us")
    written = 0
    with path.open("w", encoding="utf-8") as f:
        f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
        for first in range(0, rate.size, 60):  # an hour at a time
            c = counts[first : first + 60]
            minute = np.repeat(np.arange(first, first + c.size), c)
            t = np.sort(minute * 60 + rng.uniform(0, 60, minute.size))
            stamps = (start + (t * 1e6).astype("timedelta64[us]")).astype(str)
            p, o = AZURE_CONVERSATION.sample(max(1, t.size), rng)
            f.writelines(
                f"{s.replace('T', ' ')},{a},{b}\n" for s, a, b in zip(stamps, p, o, strict=False)
            )
            written += t.size
    return written


def run_plan(log: Path) -> tuple[float, float]:
    """Wall seconds and peak memory (GiB) of ``replicaplan plan --log log --json``."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "replicaplan.interface.cli", "plan", "--log", str(log), "--json"],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(done.stderr)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, peak_kib / 2**20


def csv_rows(path: Path, limit: int) -> None:
    """The peer: the csv module and datetime, one row at a time."""
    with path.open(newline="", encoding="utf-8") as f:
        times, p, o = [], [], []
        for k, row in enumerate(csv.DictReader(f)):
            if k == limit:
                break
            times.append(datetime.fromisoformat(row["TIMESTAMP"][:26]).timestamp())
            p.append(int(row["ContextTokens"]))
            o.append(int(row["GeneratedTokens"]))
        np.array(times), np.array(p), np.array(o)


STAGES = """
import time, sys
t0 = time.perf_counter()
from replicaplan.planner.plan import plan
from replicaplan.traffic.logs import read_trace
t1 = time.perf_counter()
log = read_trace(sys.argv[1])
t2 = time.perf_counter()
plan(log)
t3 = time.perf_counter()
print(f"{t1 - t0:.2f} {t2 - t1:.2f} {t3 - t2:.2f}")
"""


def stages(log: Path, jobs: str) -> list[float]:
    """Seconds of the imports, the reading and the plan itself, in a fresh process with
    ``REPLICAPLAN_JOBS`` = ``jobs`` (where the command's time goes)."""
    env = {**os.environ, "REPLICAPLAN_JOBS": jobs}
    done = subprocess.run(
        [sys.executable, "-c", STAGES, str(log)], capture_output=True, text=True, env=env
    )
    return [float(x) for x in done.stdout.split()]


def main():
    if FULL.is_file():
        wall, _ = run_plan(FULL)
        print(f"full conversation log (19,366 requests): {wall:.2f} s  (target <= 1.5 s)")
        for jobs in ("1", str(os.cpu_count() or 1)):
            imports, read, planned = stages(FULL, jobs)
            print(
                f"  in-process, {jobs} core(s): imports {imports:.2f} s, reading {read:.2f} s, "
                f"plan {planned:.2f} s"
            )
    else:
        print(f"full conversation log not found at {FULL}: skipped")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "week.csv"
        t0 = time.perf_counter()
        n = synthetic_week(big)
        size = os.path.getsize(big) / 2**20
        print(
            f"synthetic week: {n:,} requests, {size:,.0f} MiB, written in "
            f"{time.perf_counter() - t0:.0f} s"
        )
        wall, peak = run_plan(big)
        print(
            f"plan of the week: {wall:.1f} s (target <= 15 s), peak memory {peak:.2f} GiB "
            "(target <= 4 GiB)"
        )
        sub = Path(tmp) / "first-million.csv"
        with big.open() as src, sub.open("w") as dst:
            for k, line in enumerate(src):
                if k > 1_000_000:
                    break
                dst.write(line)
        t0 = time.perf_counter()
        csv_rows(sub, 1_000_000)
        peer = time.perf_counter() - t0
        t0 = time.perf_counter()
        read_trace(sub)
        ours = time.perf_counter() - t0
        print(
            f"reading 1,000,000 rows: csv module {peer:.2f} s, numpy chunks {ours:.2f} s, "
            f"ratio {peer / ours:.1f}x"
        )


if __name__ == "__main__":
    main()

"""Speed of the configuration search: ``replicaplan search`` over the default grid on the full
Azure conversation log, in a process pool on this machine's cores, against the same search run
serially (its peer), and on a two-worker Dask LocalCluster.

Target (issue "Which replica to rent"): at least 100 candidates in ≤ 60 s on two cores, the
serial time printed beside it, and the cluster's results identical. Run: make bench
"""

import json
import os
import sys
import time
from pathlib import Path

from replicaplan.interface.search_report import summary
from replicaplan.planner import search as S
from replicaplan.traffic.logs import read_trace

ROOT = Path(__file__).resolve().parents[1]
FULL = ROOT.parent / "shared/data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv"
SAMPLE = ROOT / "data/azure-llm-inference-2023/conv_sample.csv"
TARGET_S = 60.0


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> int:
    path = FULL if FULL.exists() else SAMPLE
    log = read_trace(path)
    grid = S.grid()
    cores = os.cpu_count() or 1
    n = log.prompt.size
    print(f"search: {len(grid)} candidates of llama-3-8b on {path.name} ({n:,} requests)")
    pooled, t_pool = timed(lambda: S.search(log, "llama-3-8b", grid, jobs=cores))
    print(f"  process pool, {cores} cores: {t_pool:6.1f} s (target <= {TARGET_S:.0f} s)")
    serial, t_serial = timed(lambda: S.search(log, "llama-3-8b", grid, jobs=1))
    print(
        f"  serial (the peer):        {t_serial:6.1f} s, {t_serial / t_pool:.2f}x the pool's time"
    )
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            clustered, t_dask = timed(lambda: S.search(log, "llama-3-8b", grid, dask=client))
    print(f"  Dask LocalCluster, 2 workers: {t_dask:6.1f} s")
    same = len({json.dumps(summary(r), sort_keys=True) for r in (pooled, serial, clustered)}) == 1
    print(f"  serial, pool and cluster identical: {same}")
    best = pooled.best
    if best is not None:
        price = best.per_million_output
        print(f"  answer: {best.candidate.label}, {price:.3f} per million output tokens")
    return 0 if same and t_pool <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

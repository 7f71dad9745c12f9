"""Speed of the capacity sweep: replicaplan.serving.replica against the plain simpy model of tests/.

Targets (issues "How much a replica holds" and "A replica that schedules like today's
engines"): a sweep of 20 rates x 5,000 requests, with the bisection that follows it for mu*, in
under 2 s on one core, and at least 20x faster than simpy on the same work, with chunked prefill
(the default); the engine simulating at least 100,000 requests a second on the Azure mix at
5 req/s with chunking on, printed beside the simpy twin's rate; the separate-pass mode's rate is
printed too (the issue sets no target for it).

Both simulators get the same arrivals and lengths. The simpy model advances one decode step
per event, so running it on the full sweep would take minutes; it is timed on the same 20 rates
with fewer requests, and the two are compared on that identical work (the cost of both grows
linearly with the number of requests at a given rate). Run: make bench
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from replica_simpy import simpy_open  # noqa: E402

from replicaplan.serving.engine import simulate_open
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.capacity import replica_sweep
from replicaplan.traffic.loadgen import AZURE_CONVERSATION, poisson_arrivals

RATES = np.linspace(1.0, 10.0, 20)


def best_of(repeats, fn):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def same_work(simulate, n):
    model = ReplicaModel()
    prompt, output = AZURE_CONVERSATION.sample(n, np.random.default_rng(0))
    for rate in RATES:
        simulate(model, poisson_arrivals(rate, n, np.random.default_rng(1)), prompt, output)


def engine_rate(simulate, n, chunked):
    """Requests simulated per second of wall time at 5 req/s on the Azure conversation mix."""
    rng = np.random.default_rng(2)
    arrival = poisson_arrivals(5.0, n, rng)
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    model = ReplicaModel(chunked_prefill=chunked)
    return n / best_of(
        3 if simulate is simulate_open else 1, lambda: simulate(model, arrival, prompt, output)
    )


def main():
    full = best_of(3, lambda: replica_sweep(RATES, n_requests=5000))
    print(f"full sweep, 20 rates x 5,000 requests (replicaplan): {full:.2f} s  (target < 2 s)")
    n = 1000
    fast = best_of(3, lambda: same_work(simulate_open, n))
    slow = best_of(1, lambda: same_work(simpy_open, n))
    print(
        f"same work, 20 rates x {n} requests: replicaplan {fast * 1e3:.0f} ms, simpy {slow:.1f} s"
    )
    print(f"ratio simpy / replicaplan: {slow / fast:.0f}x  (target >= 20x)")
    print(f"simpy on the full sweep, extrapolated: {slow * 5000 / n:.0f} s")
    for chunked, mode, target in (
        (True, "chunked prefill (default)", "  (target >= 100,000)"),
        (False, "separate prefill passes", ""),
    ):
        fast = engine_rate(simulate_open, 50_000, chunked)
        slow = engine_rate(simpy_open, 2_000, chunked)
        print(
            f"{mode}, 5 req/s, Azure mix: replicaplan {fast:,.0f} req/s{target}, "
            f"simpy {slow:,.0f} req/s, ratio {fast / slow:.0f}x"
        )


if __name__ == "__main__":
    main()

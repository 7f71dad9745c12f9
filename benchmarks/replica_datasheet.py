"""TTFT and TPOT of a Llama-3-8B-shaped model on one A100 (datasheet figures), at three loads.

Not a speed benchmark: the figures the closing note of the "replica that behaves like a real
server" work quotes, reproducible. The replica comes from ``ReplicaModel.from_hardware`` with its
stated defaults (70 % of peak bandwidth in decode, 50 % of peak FLOP/s in prefill, vLLM's token
budget and memory share, a batch of 256); lengths from the Azure conversation mix; Poisson
arrivals; 5,000 requests a load, the first 10 % dropped. Run: .venv/bin/python benchmarks/...
"""

import numpy as np

from replicaplan.serving.engine import simulate_open
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation import capacity
from replicaplan.traffic.loadgen import AZURE_CONVERSATION, poisson_arrivals


def main() -> None:
    model = ReplicaModel.from_hardware("llama-3-8b", "a100-80gb")
    sweep = capacity.replica_sweep(np.arange(2.0, 30.01, 2.0), model=model)
    print(
        f"Llama-3-8B on one A100 80GB: KV cache {model.kv_capacity_tokens:,.0f} tokens; "
        f"mu* = {sweep.mu_star:.2f} ± {sweep.mu_star_stderr:.2f} req/s"
    )
    n = 5000
    prompt, output = AZURE_CONVERSATION.sample(n, np.random.default_rng(0))
    for share in (0.3, 0.6, 0.9):
        rate = share * sweep.mu_star
        arrival = poisson_arrivals(rate, n, np.random.default_rng([0, 1]))
        tr = simulate_open(model, arrival, prompt, output).window(n // 10)
        ttft = np.percentile(tr.ttft, [50, 90]) * 1e3
        tpot = np.percentile(tr.tpot[tr.output > 1], [50, 90]) * 1e3
        print(
            f"{share:.0%} of mu* ({rate:5.2f} req/s): TTFT p50 {ttft[0]:6.1f} ms p90 "
            f"{ttft[1]:6.1f} ms; TPOT p50 {tpot[0]:5.1f} ms p90 {tpot[1]:5.1f} ms; "
            f"preemptions {int(tr.preemptions.sum())}"
        )


if __name__ == "__main__":
    main()

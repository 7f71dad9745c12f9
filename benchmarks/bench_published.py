"""The datasheet replica against published measurements: predicted / published for every row.

Reads benchmarks/published/measurements.csv (sources in benchmarks/published/README.md), runs
each row's load through the replica ``ReplicaModel.from_hardware`` builds for its model and GPUs
(``replicaplan.simulation.published``) and prints the ratio of each row, then the geometric-mean
error, the share within 1.25x and the bias, for all rows and by regime. The targets (issue #30):
a geometric-mean error of at most 1.15, at least 85 % of rows within 1.25x, no regime past 1.5x.
Run: .venv/bin/python benchmarks/bench_published.py
"""

from pathlib import Path

from replicaplan.simulation import published

CSV = Path(__file__).resolve().parent / "published" / "measurements.csv"


def main() -> None:
    results = published.compare(CSV)
    print(f"{'source':28} {'model':14} {'gpu':10} tp {'lengths':>12} {'load':>13} {'metric':13}"
          f" {'published':>10} {'predicted':>10} ratio")  # fmt: skip
    for m, predicted, ratio in results:
        lengths = f"{m.input_tokens}/{m.output_tokens}"
        print(
            f"{m.source.split(':')[0]:28} {m.model:14} {m.gpu:10} {m.tp:2} {lengths[:12]:>12} "
            f"{m.load + ' ' + str(m.requests):>13} {m.metric:13} {m.published:10.1f} "
            f"{predicted:10.1f} {ratio:5.2f}"
        )
    print()
    for name, s in published.by_regime(results).items():
        print(
            f"{name:14} {s.rows:3} rows: geometric-mean error x{s.gm_error:.3f} (target <= 1.15), "
            f"{s.within_125:.0%} within 1.25x (target >= 85 %), mean ratio {s.bias:.3f}"
        )


if __name__ == "__main__":
    main()

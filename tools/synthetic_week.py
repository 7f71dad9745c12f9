"""Write data/synthetic-week/rates.csv: a week of per-minute traffic for ``replicaplan plan``.

Seven days like the book's reference day without its event, each one different
(``day.noisy_days`` with noise 0.1, seed 7), minute 0 at midnight UTC. Run from the repository
root; ``tests/test_plan.py`` checks that the file is what this script writes.
"""

from pathlib import Path

from replicaplan.scenarios.synthetic import noisy_days

DAYS, NOISE, SEED = 7, 0.1, 7
PATH = Path("data/synthetic-week/rates.csv")


def rows() -> str:
    rates = noisy_days(DAYS, noise=NOISE, seed=SEED).ravel()
    return "minute,rate_rps\n" + "".join(f"{m},{r:.4f}\n" for m, r in enumerate(rates))


if __name__ == "__main__":
    PATH.write_text(rows(), encoding="utf-8")
    print(f"wrote {PATH}")

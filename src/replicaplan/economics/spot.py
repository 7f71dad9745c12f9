"""A spot fleet over the simulated day: revocations, lost work, and what a useful token costs.

The fleet follows one policy of the simulated day (``day.simulate_day``). Replicas above an
on-demand base of ``base`` replicas run on spot capacity at a discount d. Each spot replica is
revoked as a Poisson process of rate r per hour, with a notice of ``notice_s`` seconds:

* a replacement is called at the notice and paid while it boots (``startup_s``); if the notice is
  shorter than the start-up, the fleet is one replica short for the difference (capacity gap);
* the requests in flight on the revoked replica (Poisson with the replica's mean concurrency,
  each part-way through its answer) lose work. With ``recovery="restart"`` they start again from
  scratch elsewhere: their prefill and every token already generated are computed again. With
  ``recovery="resume"`` (as SpotServe does, using the notice to record how far each answer got)
  only the KV cache is rebuilt, by one prefill over the prompt and the tokens already produced.

Everything wasted is counted in replica-seconds paid: the replacement's boot and the recomputed
work. ω is that waste over all the spot replica-seconds paid, and the spot share of the day costs
(1 − d) · C · (paid + waste), which is (1 − d)/(1 − ω) times what the same useful work costs on
demand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.economics.cost import spot_cost_factor
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation.day import DayResult


@dataclass(frozen=True)
class SpotConfig:
    """Spot terms and recovery. Defaults: a 60 % discount, one revocation per replica every 4 h."""

    discount: float = 0.6
    revocations_per_hour: float = 0.25
    notice_s: float = 30.0
    startup_s: float = EXAMPLE.startup_min * 60
    recovery: str = "restart"
    prompt_tokens: float = 1000.0
    answer_tokens: int = EXAMPLE.answer_tokens

    def __post_init__(self):
        _check.fraction("discount", self.discount, low_open=False, high_open=True)
        _check.non_negative("revocations_per_hour", self.revocations_per_hour)
        _check.non_negative("notice_s", self.notice_s)
        _check.non_negative("startup_s", self.startup_s)
        _check.non_negative("prompt_tokens", self.prompt_tokens)
        _check.integer("answer_tokens", self.answer_tokens, minimum=1)
        if self.recovery not in ("restart", "resume"):
            raise ValueError(f"recovery must be 'restart' or 'resume', got {self.recovery!r}")


@dataclass(frozen=True)
class SpotDay:
    """What a spot (or two-layer) fleet did over the day."""

    on_demand_hours: float
    """Replica-hours of the base layer, at full price."""
    spot_hours: float
    """Replica-hours the spot layer would pay with no revocation."""
    waste_hours: float
    """Replica-hours paid for boots of replacements and recomputed work."""
    revocations: int
    interrupted_requests: int
    capacity_gap_hours: float
    """Replica-hours in which a revoked replica had not been replaced yet."""
    extra_wait_s: float
    """Mean extra wait of an interrupted request (its work redone, or its cache rebuilt)."""
    discount: float
    price_per_replica_hour: float

    @property
    def omega(self) -> float:
        """ω: share of the spot replica-hours paid that went to waste."""
        total = self.spot_hours + self.waste_hours
        return self.waste_hours / total if total > 0 else 0.0

    @property
    def cost(self) -> float:
        """On-demand base at full price plus spot hours (waste included) at a discount."""
        return self.price_per_replica_hour * (
            self.on_demand_hours + (1 - self.discount) * (self.spot_hours + self.waste_hours)
        )

    @property
    def all_on_demand_cost(self) -> float:
        """The same useful hours, all at full price, nothing wasted."""
        return self.price_per_replica_hour * (self.on_demand_hours + self.spot_hours)

    @property
    def saving(self) -> float:
        """1 − cost / all-on-demand cost."""
        return 1 - self.cost / self.all_on_demand_cost

    @property
    def spot_factor_measured(self) -> float:
        """Cost of the spot layer's useful work over its on-demand cost, as simulated.

        This equals (1 − d)/(1 − ω) at the simulated ω *by construction* (ω is defined from the
        same paid and wasted hours): an identity, not evidence for the formula. The evidence is
        ``omega`` against ``omega_expected``.
        """
        return (1 - self.discount) * (self.spot_hours + self.waste_hours) / self.spot_hours

    @property
    def spot_factor_formula(self) -> float:
        """(1 − d)/(1 − ω) at the measured ω."""
        return spot_cost_factor(self.discount, self.omega)


def _per_minute(day: DayResult, config: SpotConfig, model: ReplicaModel, base: int):
    """Spot replicas ready, mean requests in flight on one, and replica-seconds per decoded
    token, for every minute of the day."""
    spot_ready = np.maximum(day.ready - base, 0)
    residence_s = config.answer_tokens * float(model.tpot(model.batch))
    ready = np.maximum(day.ready, 1)
    in_flight = day.rate / ready * residence_s  # Little's law on one replica
    b = np.clip(in_flight, 1.0, model.batch)
    token_share_s = model.tpot(b) / b
    return spot_ready, in_flight, token_share_s


def expected_waste_s(config: SpotConfig, in_flight: float, token_share_s: float, model) -> float:
    """Mean replica-seconds wasted by one revocation: the replacement's boot, plus the work of
    the requests in flight (Poisson with mean ``in_flight``, each a uniform share of its answer
    done): on restart their prefill and the tokens already made; on resume one prefill of the
    prompt and those tokens."""
    done = (config.answer_tokens - 1) / 2  # mean of a uniform integer in [0, answer)
    if config.recovery == "restart":
        per_request = float(model.prefill_s(config.prompt_tokens)) + done * token_share_s
    else:
        per_request = float(model.prefill_s(config.prompt_tokens + done))
    return config.startup_s + in_flight * per_request


def expected_omega(
    day: DayResult, config: SpotConfig = SpotConfig(), *, base: int = 0, model=None
) -> float:
    """ω predicted from the revocation rate, the start-up time and the work in flight.

    Revocations arrive at r per spot replica-hour; each wastes ``expected_waste_s``; so over
    the day ω = W/(H + W) with W the expected waste and H the spot replica-hours paid.
    """
    base = _check.integer("base", base, minimum=0)
    model = model or ReplicaModel()
    spot_ready, in_flight, token_share_s = _per_minute(day, config, model, base)
    revocations = spot_ready * config.revocations_per_hour / 60
    waste = sum(
        revocations[m] * expected_waste_s(config, in_flight[m], token_share_s[m], model)
        for m in np.flatnonzero(spot_ready)
    )
    paid_s = float(np.maximum(day.paid - base, 0).sum() * 60)
    return float(waste / (paid_s + waste)) if paid_s + waste > 0 else 0.0


def expected_gap_hours(day: DayResult, config: SpotConfig = SpotConfig(), *, base: int = 0):
    """Replica-hours short of capacity: r per replica-hour times max(0, T_start − notice)."""
    base = _check.integer("base", base, minimum=0)
    ready_hours = float(np.maximum(day.ready - base, 0).sum() / 60)
    shortfall_s = max(0.0, config.startup_s - config.notice_s)
    return ready_hours * config.revocations_per_hour * shortfall_s / 3600


def simulate_spot_day(
    day: DayResult,
    config: SpotConfig = SpotConfig(),
    *,
    base: int = 0,
    price_per_replica_hour: float = EXAMPLE.price_per_replica_hour,
    model: ReplicaModel | None = None,
    seed: int = 0,
) -> SpotDay:
    """Run the day's fleet with ``base`` on-demand replicas and the rest on spot capacity."""
    base = _check.integer("base", base, minimum=0)
    price_per_replica_hour = _check.positive("price_per_replica_hour", price_per_replica_hour)
    model = model or ReplicaModel()
    rng = np.random.default_rng(seed)
    per_min = config.revocations_per_hour / 60

    spot_paid = np.maximum(day.paid - base, 0)
    spot_ready, in_flight, token_share = _per_minute(day, config, model, base)
    step_s = float(model.tpot(model.batch))
    prefill_prompt = float(model.prefill_s(config.prompt_tokens))

    waste_s = gap_s = wait_s = 0.0
    revocations = interrupted = 0
    for m in np.flatnonzero(spot_ready):
        k = int(rng.poisson(spot_ready[m] * per_min))
        if not k:
            continue
        revocations += k
        token_share_s = float(token_share[m])
        for _ in range(k):
            waste_s += config.startup_s  # the replacement boots, paid
            gap_s += max(0.0, config.startup_s - config.notice_s)
            j = int(rng.poisson(in_flight[m]))
            if not j:
                continue
            interrupted += j
            done = rng.integers(0, config.answer_tokens, size=j)  # tokens each answer had reached
            if config.recovery == "restart":
                lost = j * prefill_prompt + done.sum() * token_share_s
                wait_s += float(j * prefill_prompt + done.sum() * step_s)
            else:
                lost = float(model.prefill_s(config.prompt_tokens + done).sum())
                wait_s += lost
            waste_s += float(lost)
    return SpotDay(
        on_demand_hours=float(np.minimum(day.paid, base).sum() / 60),
        spot_hours=float(spot_paid.sum() / 60),
        waste_hours=waste_s / 3600,
        revocations=revocations,
        interrupted_requests=interrupted,
        capacity_gap_hours=gap_s / 3600,
        extra_wait_s=wait_s / interrupted if interrupted else 0.0,
        discount=config.discount,
        price_per_replica_hour=price_per_replica_hour,
    )

"""The power grid, the analogy the book opens with: a few figures from the UK's National Grid.

Only the opening chapter uses them, so they live beside it, not in the package.

On 4 July 1990 the World Cup semi-final England – West Germany, played in Turin, ended on
penalties; in the minutes after it the English grid saw demand rise by 2,800 MW, the largest
"TV pickup" on record, as viewers switched on their kettles. The Dinorwig pumped-storage plant
in Wales, its turbines already spinning, goes from 0 to 1,320 MW in 12 seconds.
"""

from __future__ import annotations

from replicaplan.core import _check

TV_PICKUP_1990_MW = 2800.0
"""Demand surge after England – West Germany, 4 July 1990, in megawatts."""
KETTLE_KW = 3.0
"""A British electric kettle, kilowatts."""
DINORWIG_MW = 1320.0
"""Dinorwig's full output, megawatts."""
DINORWIG_RAMP_S = 12.0
"""Seconds Dinorwig takes from zero to full output, turbines spinning."""


def kettles(surge_mw: float = TV_PICKUP_1990_MW, kettle_kw: float = KETTLE_KW) -> float:
    """How many kettles switched on at once a surge of ``surge_mw`` megawatts amounts to."""
    return _check.positive("surge_mw", surge_mw) * 1000 / _check.positive("kettle_kw", kettle_kw)


def ramp_rate(power_mw: float = DINORWIG_MW, seconds: float = DINORWIG_RAMP_S) -> float:
    """Megawatts per second of a plant that reaches ``power_mw`` in ``seconds``."""
    return _check.positive("power_mw", power_mw) / _check.positive("seconds", seconds)

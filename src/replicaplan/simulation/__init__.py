"""Fleets over time: replicas that start and stop (``fleet``), the closed loop second by
second (``control``), any list of policies over a day minute by minute (``day``), the
open-loop capacity sweep and μ* (``capacity``), the published measurements (``published``) and
a benchmark fitted (``benchfit``). The book's policy table is a scenario, in ``scenarios``.

Layer 5. Imports the layers below it.
"""

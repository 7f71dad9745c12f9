"""Fleets over time: replicas that start and stop (``fleet``), the closed loop second by
second (``control``), the simulated day minute by minute and its policy table (``day``), the
open-loop capacity sweep and μ* (``capacity``).

Layer 5. Imports the layers below it.
"""

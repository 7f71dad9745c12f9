"""One replica: the hardware catalogue and the continuous-batching engine simulated step by step
(``replica``), its fluid limit and the sizing rule (``fluid``), the M/M/1 closed forms and
simulators (``queueing``), the roofline's MFU and MBU (``roofline``), start-up time (``coldstart``).

Layer 2. Imports ``core`` only.
"""

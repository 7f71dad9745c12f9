"""What arrives: request lengths and arrivals (``loadgen``), request logs and rate series read
and checked (``logs``), and every forecast of the traffic (``forecast``). The book's own
synthetic day lives above the library, in ``scenarios.synthetic``.

Layer 3. Imports ``core`` only.
"""

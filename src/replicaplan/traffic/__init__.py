"""What arrives: request lengths and arrivals, request logs and rate series read and checked
(``loadgen``), the book's synthetic day and its noisy siblings (``synthetic``), forecasts of
the daily season (``forecast``).

Layer 3. Imports ``core`` and ``serving``.
"""

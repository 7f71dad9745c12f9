"""The book's scenarios: the reference day of traffic and its noisy, weekly siblings
(``synthetic``), and the studies the chapters run on them (``studies``: the policy table, the
forecast study, the 21:00 event, utilization against concurrency).

Layer 8, above the library: it imports every layer below; ``forbidden: the library imports
none of the book's scenarios`` (pyproject.toml) keeps the arrow one way, so no planner default
is the book's day. Only ``interface`` (the ``day`` command, the text of the policy table) and
the chapters import it.
"""

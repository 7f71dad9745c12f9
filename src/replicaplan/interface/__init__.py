"""What a person reads: text and tables (``report``), a plan's report (``plan_report``), the
book's figures (``plots``) and the ``replicaplan`` command (``cli``).

Layer 8 (top). Imports any layer; nothing imports it but itself.
"""

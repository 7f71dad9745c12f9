"""A reader's own traffic turned into a plan: reserves for ramps and steps (``reserve``), the
operating point, the policies replayed and priced, the learned schedule, the HPA behavior and
the manifests' replays (``plan``).

Layer 7. Imports the layers below it.
"""

"""What decides the fleet: the Kubernetes HPA and Knative's KPA as their controllers compute
(``hpa``, ``kpa``), the adapters that let them drive a simulated fleet (``controllers``), and
the Kubernetes and KEDA objects a plan writes and reads back (``manifest``).

Layer 4. Imports ``core``, ``serving`` and ``traffic``.
"""

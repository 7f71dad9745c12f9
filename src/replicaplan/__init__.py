"""replicaplan: how many replicas of a language model to keep on, and what that capacity costs.

One module per idea; the chapters of the book import them.

example    the running example (one world for every chapter)
grid       the power-grid figures of the opening
replica    the continuous-batching replica, simulated event to event
loadgen    request lengths from the Azure trace; open/closed-loop arrivals; trace replay
capacity   the open-loop capacity sweep, mu*, the M/M/1 closed forms
autoscaler the Kubernetes HPA (rule, stabilization, rate limits) and Knative's KPA
control    the closed loop: traffic -> replicas -> metrics -> controller, second by second
coldstart  T_start = machine + image + weights + warm-up; weight-loading tiers
reserve    ramp and step reserves, scale to zero
day        the simulated day and its policy table
cost       cost per token, the day priced, the spot factor, input vs output tokens
spot       a spot (or two-layer) fleet over the simulated day
roofline   MFU, MBU, KV bytes per token, the decode roofline
plots      figure functions
book       helpers for the chapter notebooks (glue)
cli        the ``replicaplan`` command
"""

__version__ = "0.1.0"

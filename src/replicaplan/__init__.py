"""replicaplan: how many replicas of a language model to keep on, and what that capacity costs.

One module per idea, in floors; a module imports only from the floors below it.

ground      example    the running example (one world for every chapter)
            _check     input checks, and the one rounding rule for replica counts
            symbols    the book's notation as sympy symbols, and ``lambdify_once``
models      grid       the power-grid figures of the opening
            stats      standard errors of a measured share (binomial, batch means)
            queueing   the M/M/1 closed forms and simulators; the interactive law
            roofline   MFU, MBU, KV bytes per token, the decode roofline
            replica    the continuous-batching replica, simulated event to event
            loadgen    request lengths from the Azure trace; open/closed-loop arrivals; replay
            coldstart  T_start = machine + image + weights + warm-up; weight-loading tiers
            reserve    ramp and step reserves, scale to zero
            hpa        the Kubernetes HPA, as its controller computes each decision
            kpa        Knative's KPA, as its autoscaler computes each decision
            fleet      replicas that start, serve and stop; the sizing rule; the fluid replica
            controllers the Controller protocol and every controller (HPA, KPA, the day's)
analyses    capacity   the open-loop capacity sweep and mu*
            day        the simulated day and its policy table
            control    the closed loop: traffic -> replicas -> metrics -> controller
            manifest   the HPA (autoscaling/v2) and KEDA ScaledObject a plan applies; read back
composed    cost       cost per token, the day priced, the spot factor, input vs output tokens
            spot       a spot (or two-layer) fleet over the simulated day
            plan       a reader's own traffic: mu*, L*, the policies replayed and priced, a
                       schedule from its days, the autoscaler's behavior and manifests
faces       report     text: the policy table, clock times, the lines the CLI prints
            plan_report a plan as JSON, terminal text, or a report directory with its figure
            plots      figure functions
            book       helpers for the chapter notebooks (glue)
            cli        the ``replicaplan`` command

Conventions. A formula the book displays is derived once with sympy from the symbols of
``symbols`` (Python names spell the book's notation: ``mu_star`` is μ*, ``rho_bar`` is ρ̄,
``T_start`` is T_start), turned into a numeric function once by ``symbols.lambdify_once``, and
that function is what every caller runs. A count of replicas is rounded by ``_check.ceil_count``
(or ``floor_count``) and nowhere else. Models return numbers; only ``report`` and ``plots`` make
text and figures.
"""

__version__ = "0.1.0"

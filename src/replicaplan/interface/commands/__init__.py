"""The ``replicaplan`` commands, one module each: ``add(sub)`` declares its options (every number
typed and range-checked by ``interface.options``, so an error names the flag) and ``run(args)`` does
the work and returns its text (and an exit status when it is not 0). ``fleet`` holds what
``plan``, ``search`` and ``fit`` share: the replica from its options, the files checked before
any work, the plan's one call and its staged outputs.

Layer: interface.
"""

COMMANDS = ("day", "capacity", "cost", "roofline", "plan", "fit", "search")
"""The subcommands, in the order ``--help`` lists them."""

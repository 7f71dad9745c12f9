"""What it costs: the cost per token, a day priced, input against output tokens (``cost``),
spot capacity over a day (``spot``).

Layer 6. Imports the layers below it.
"""

"""The configuration search's default grid, apart from the search itself so that the command
line can show it in its help without importing the planner (names and numbers only).

Layer: planner. Imports nothing.
"""

SEARCH_GPUS = ("a100-80gb", "h100-sxm", "h200-sxm", "l40s")
SEARCH_GPUS_PER_REPLICA = (1, 2, 4, 8)
"""Tensor-parallel sizes tried: up to the eight GPUs of one HGX or DGX node, where NVLink joins
them all; a model whose KV heads do not split that many ways is refused per candidate."""
SEARCH_BATCHES = (64, 128, 256)
SEARCH_TOKEN_BUDGETS = (2048, 8192)
SEARCH_CHUNKED = (True, False)
SEARCH_REQUESTS = 2000
"""Requests per rate of each candidate's sweep: a screening, half the planner's 4,000; the
chosen candidate is planned again in full by ``plan.plan``."""

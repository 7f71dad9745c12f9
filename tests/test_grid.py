"""The default grid of configurations the search screens (planner.grid), and the datasheets it
reads (H200: 143,771 MiB and 4.8 TB/s; L40S: 46,068 MiB and 362 TFLOP/s dense FP16)."""

import pytest

from replicaplan.planner.grid import SEARCH_GPUS
from replicaplan.planner.search import grid
from replicaplan.serving.catalogue import GPUS


def test_the_default_grid_is_over_a_hundred_candidates_with_the_new_datasheets():
    candidates = grid()
    assert len(SEARCH_GPUS) == 4
    # GPUs × tensor-parallel sizes 1, 2, 4, 8 (one node's NVLink) × batches × budgets × chunking
    assert len(candidates) == 4 * 4 * 3 * 2 * 2 >= 100 and len(set(candidates)) == len(candidates)
    assert max(c.gpus for c in candidates) == 8
    # the H200 and L40S as their datasheets and nvidia-smi give them
    assert GPUS["h200-sxm"].memory_bytes == 143_771 * 2**20 and GPUS["h200-sxm"].bandwidth == 4.8e12
    assert GPUS["l40s"].memory_bytes == 46_068 * 2**20 and GPUS["l40s"].flops == 362e12
    with pytest.raises(ValueError, match="unknown GPU 'a10g'"):
        grid(gpus=("a10g",))

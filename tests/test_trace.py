"""The record of a run (serving.trace): its per-request metrics, worked by hand."""

import numpy as np

from replicaplan.core.promises import Promises
from replicaplan.serving.trace import Trace


def test_trace_metrics():
    tr = Trace(
        np.array([0.0, 1.0]),
        np.array([0.5, 1.2]),
        np.array([2.5, 1.2]),
        np.array([10, 10]),
        np.array([5, 1]),
    )
    np.testing.assert_allclose(tr.ttft, [0.5, 0.2])
    np.testing.assert_allclose(tr.tpot, [0.5, 0.0])
    np.testing.assert_allclose(tr.latency, [2.5, 0.2])
    assert list(tr.meets(Promises(0.4, 1.0))) == [False, True]
    assert tr.window(1).arrival.tolist() == [1.0]

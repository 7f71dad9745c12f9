"""Independent runs on the cores (core.parallel): the serial loop's results, bit for bit."""

import multiprocessing

import numpy as np
import pytest

from replicaplan.core import parallel
from replicaplan.planner.calibration import measured_replica
from replicaplan.planner.operating import operating_point
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic.loadgen import AZURE_CONVERSATION


def test_fork_map_is_the_serial_loop_and_runs_in_other_processes(monkeypatch):
    monkeypatch.setenv("REPLICAPLAN_JOBS", "2")
    scale = np.array([1.5, 2.5])  # a closure over an array: inherited, not pickled

    def work(k):
        return float(
            np.random.default_rng(k).normal() * scale[k % 2]
        ), multiprocessing.current_process().name

    got = parallel.fork_map(work, range(6))
    assert [v for v, _ in got] == [work(k)[0] for k in range(6)]
    assert all(name != multiprocessing.current_process().name for _, name in got)


@pytest.mark.parametrize("workers", [1, 3])
def test_progress_rises_once_per_item_to_one_and_workers_bound_the_processes(workers):
    """Five items: progress reports 1/5, 2/5, … 1 in order, serial or forked, and at most
    ``workers`` distinct processes did the work."""
    seen = []
    got = parallel.fork_map(
        lambda k: (k * k, multiprocessing.current_process().name),
        range(5),
        workers=workers,
        progress=seen.append,
    )
    assert [v for v, _ in got] == [0, 1, 4, 9, 16]
    assert seen == [1 / 5, 2 / 5, 3 / 5, 4 / 5, 1.0]
    assert len({name for _, name in got}) <= workers


def test_the_operating_point_and_measured_replica_do_not_depend_on_the_cores(monkeypatch):
    """The planner's two sweeps, on one core and on two: equal to the last bit."""
    model = ReplicaModel()
    results = []
    for jobs in ("1", "2"):
        monkeypatch.setenv("REPLICAPLAN_JOBS", jobs)
        point = operating_point(AZURE_CONVERSATION, model, n_requests=600)
        results.append((point, measured_replica(model, AZURE_CONVERSATION, point, n_requests=300)))
    assert results[0] == results[1]


@pytest.mark.parametrize("bad", ["0", "two", "-1"])
def test_a_bad_job_count_is_named(monkeypatch, bad):
    monkeypatch.setenv("REPLICAPLAN_JOBS", bad)
    with pytest.raises(ValueError, match="REPLICAPLAN_JOBS must be a whole number >= 1"):
        parallel.jobs()


def test_the_stop_signals_are_held_while_the_pool_forks_and_released_in_the_workers():
    """Every at-fork callback in the parent runs with SIGINT, SIGTERM and SIGALRM held (so no
    handler raises inside one, where Python prints the exception and drops it), the parent has
    them back once the pool exists, and each worker has them back before it runs a task."""
    import os
    import signal

    from replicaplan.core import parallel

    seen: list = []
    os.register_at_fork(after_in_parent=lambda: seen.append(signal.pthread_sigmask(0, [])))
    blocked_in_workers = parallel.fork_map(
        lambda _: sorted(int(s) for s in signal.pthread_sigmask(0, [])), range(4), workers=2
    )
    mask_now = signal.pthread_sigmask(0, [])
    assert seen and all(set(parallel.HELD) <= set(mask) for mask in seen[-2:])
    assert not set(parallel.HELD) & set(mask_now)
    assert all(not set(map(int, parallel.HELD)) & set(w) for w in blocked_in_workers)

"""Independent runs on the cores (core.parallel): the serial loop's results, bit for bit."""

import multiprocessing
import os

import numpy as np
import pytest
from processes import alive

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


@pytest.fixture
def a_stop_on_sigusr1():
    """SIGUSR1 handled as the command handles a stop: ``stops.stop(KeyboardInterrupt)``."""
    import signal

    from replicaplan.core import stops

    previous = signal.signal(signal.SIGUSR1, lambda *_: stops.stop(KeyboardInterrupt))
    yield signal.SIGUSR1
    signal.signal(signal.SIGUSR1, previous)


def _signal_self(signum) -> None:
    """Send ``signum`` to this process and pass a few bytecodes, where its handler runs."""
    import os

    os.kill(os.getpid(), signum)
    for _ in range(100):
        pass


@pytest.mark.parametrize("when", ["between two forks", "while the pool ends"])
def test_a_stop_while_the_pool_starts_or_ends_leaves_no_worker_behind(
    monkeypatch, a_stop_on_sigusr1, when
):
    """A stop that comes while the pool forks its workers (after the first, before the second)
    or while it ends them is raised once the pool is gone: the run stops with
    KeyboardInterrupt and no worker outlives it. Raised where it came, the first case left the
    second worker forked but unknown to the pool, and the second left both running (seen: a
    command's pipe held open after it had exited)."""
    from multiprocessing import context
    from multiprocessing import pool as mp_pool

    if when == "between two forks":
        forks = []
        fork = context.ForkProcess._Popen

        def signalled_after_the_first(process):
            popen = fork(process)
            forks.append(popen)
            if len(forks) == 1:
                _signal_self(a_stop_on_sigusr1)
            return popen

        monkeypatch.setattr(context.ForkProcess, "_Popen", staticmethod(signalled_after_the_first))
    else:
        finish = mp_pool.Pool._help_stuff_finish

        def signalled(*args):
            _signal_self(a_stop_on_sigusr1)
            return finish(*args)

        monkeypatch.setattr(mp_pool.Pool, "_help_stuff_finish", staticmethod(signalled))
    with pytest.raises(KeyboardInterrupt):
        parallel.fork_map(lambda k: k * k, range(6), workers=2)
    assert alive(parent=os.getpid()) == []
    assert multiprocessing.active_children() == []


def test_a_worker_leaves_ctrl_c_to_the_parent():
    """A terminal sends Ctrl-C to every process of the group; a worker ignores it (the parent
    ends the pool), where raising KeyboardInterrupt would print the worker's own traceback."""
    import signal

    got = parallel.fork_map(lambda _: signal.getsignal(signal.SIGINT), range(2), workers=2)
    assert got == [signal.SIG_IGN, signal.SIG_IGN]

"""Independent runs on this machine's cores, with the results of a serial loop.

``fork_map(fn, items)`` is ``[fn(x) for x in items]`` computed by forked worker processes: the
workers inherit ``fn`` and everything it closes over (nothing is pickled on the way in, so a
closure over a model and a sample works), and send back only the results, in order. The runs
are the same computations with the same seeds as the serial loop, so the results are the same
bit for bit (tested); only the time changes.

It runs the loop serially where forking would not pay or not be safe: one item, one core,
``REPLICAPLAN_JOBS=1`` in the environment, a platform without ``fork``, or inside a process
that is itself a worker of a pool (this one's, a Dask worker), which already uses the cores.
It is the package's one process pool: the capacity sweeps, the plan's replays and the
configuration search all run on it.

Layer: core.
"""

from __future__ import annotations

import multiprocessing
import os
import signal

from replicaplan.core import stops

_TASK = None


def _leave_stops() -> None:
    """A worker ignores Ctrl-C, which a terminal sends to the whole process group: the parent
    acts on it and ends the pool (a worker that raised KeyboardInterrupt would print its own
    traceback, and the pool would start another in its place)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(item):
    return _TASK(item)


def jobs() -> int:
    """Worker processes ``fork_map`` uses: ``REPLICAPLAN_JOBS`` if set, else the CPUs this
    process may run on; 1 inside a worker process."""
    if multiprocessing.parent_process() is not None:
        return 1
    text = os.environ.get("REPLICAPLAN_JOBS")
    if text:
        n = int(text) if text.strip().isdigit() else 0
        if n < 1:
            raise ValueError(f"REPLICAPLAN_JOBS must be a whole number >= 1, got {text!r}")
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _collect(results, n: int, progress) -> list:
    """``results`` as a list, reporting the share done (0 to 1] after each of the ``n``."""
    out = []
    for k, result in enumerate(results, 1):
        out.append(result)
        if progress is not None:
            progress(k / n)
    return out


def fork_map(fn, items, *, workers: int | None = None, progress=None) -> list:
    """``[fn(x) for x in items]``, on forked processes when that can help: ``workers`` of them
    (``jobs()`` when None), never more than the items. ``progress``, if given, is called with
    the share of items done (0 to 1] after each one, in order."""
    global _TASK
    items = list(items)
    n = min(jobs() if workers is None else workers, len(items))
    if n <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return _collect(map(fn, items), len(items), progress)
    _TASK = fn
    pool = None
    try:
        # a stop waits while the pool forks its workers and while it ends them: cut there, it
        # leaves workers that outlive the command (core.stops)
        with stops.held():
            pool = multiprocessing.get_context("fork").Pool(n, initializer=_leave_stops)
        return _collect(pool.imap(_call, items, chunksize=1), len(items), progress)
    finally:
        if pool is not None:
            with stops.held():
                pool.terminate()
        _TASK = None

"""Stops (Ctrl-C, SIGTERM) that wait for a section to end: the package's one way to keep a
signal out of code that must finish once started.

A command's signal handler calls ``stop(exc)`` to raise ``exc`` where the program is. Inside a
``with held():`` section it only notes the stop, and the section raises it when it ends. The
sections are the pool's start and end (``parallel.fork_map``: a pool cut while it forks its
workers or while it ends them leaves workers running after the command has exited, holding
its terminal and its pipes) and the renames that put a command's outputs into place
(``interface.files.Staging``: every target new or every target as it was).

Masking the signals in the main thread (``pthread_sigmask``) does not do this. The kernel gives a
signal to any thread that has it unmasked, numpy's BLAS threads among them, and Python then
runs the handler in the main thread at its next bytecode, mask or not (seen: workers left
behind in 3 runs of 40 on a loaded machine, and a test whose pipe never closed).

A section that has not ended ``LIMIT_S`` after the first stop it held is cut all the same, so
that a stop is never lost to a section that hangs.

Once a command's outputs are in place (``finished()``), a stop has nothing left to stop: it is
dropped, held or to come, and the run ends as it succeeded. Raised then, it would end the run
with "nothing written" over outputs that were written. ``reset()`` starts the next command.

Layer: core.
"""

from __future__ import annotations

import contextlib
import time

LIMIT_S = 10.0
"""The longest a section holds a stop, in seconds, from the first stop it held."""

_DEPTH = [0]
_PENDING: list = []
"""The stop held (one exception) and when it came, while a section runs."""
_FINISHED = [False]


@contextlib.contextmanager
def held():
    """A section that a stop does not cut: one that comes while it runs (or while a section
    inside it runs) is raised when the outermost one ends."""
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1
        if _DEPTH[0] == 0 and _PENDING:
            exc, _ = _PENDING.pop()
            _PENDING.clear()
            raise exc


def holding() -> bool:
    """Whether a section is running."""
    return _DEPTH[0] > 0


def finished() -> None:
    """The work a stop would cut is over (a command's outputs are in place): the stop held, if
    any, and every stop to come are dropped."""
    _FINISHED[0] = True
    _PENDING.clear()


def reset() -> None:
    """A new command begins: stops act again, and none is held."""
    _FINISHED[0] = False
    _PENDING.clear()


def stop(exc: BaseException | type[BaseException]) -> None:
    """Raise ``exc`` (a signal handler's stop) now, or, inside a section, when it ends; raise it
    now all the same once the section has held a stop for ``LIMIT_S`` seconds. After
    ``finished()``, drop it."""
    if _FINISHED[0]:
        return
    if _DEPTH[0] == 0:
        raise exc
    since = _PENDING[0][1] if _PENDING else time.monotonic()
    if time.monotonic() - since >= LIMIT_S:
        _PENDING.clear()
        raise exc
    _PENDING[:] = [(exc, since)]

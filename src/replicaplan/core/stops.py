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
with "nothing written" over outputs that were written. That holds from ``begin()`` to ``end()``,
the command's run: outputs written outside one (a test, a notebook) leave stops as they were.

Layer: core.
"""

from __future__ import annotations

import contextlib
import time

LIMIT_S = 10.0
"""The longest a section holds a stop, in seconds, from the first stop it held."""


class _State:
    """The stops' state in this process (one command at a time)."""

    depth = 0
    """Sections running, one inside another."""
    held = None
    """The stop held, and when the first one came: (exception, time.monotonic()), or None."""
    command = False
    """Whether a command is running (``begin()`` to ``end()``)."""
    finished = False
    """Whether the running command's work is over (``finished()``)."""


@contextlib.contextmanager
def held():
    """A section that a stop does not cut: one that comes while it runs (or while a section
    inside it runs) is raised when the outermost one ends."""
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
        if not _State.depth and _State.held is not None:
            exc, _ = _State.held
            _State.held = None
            raise exc


def begin() -> None:
    """A command begins: stops act, and none is held."""
    _State.command, _State.finished, _State.held = True, False, None


def end() -> None:
    """The command has ended: ``finished()`` no longer applies, and no stop is held."""
    _State.command, _State.finished, _State.held = False, False, None


def finished() -> None:
    """The running command's work a stop would cut is over (its outputs are in place): the
    stop held, if any, and every stop to come until ``end()`` are dropped. Outside a command,
    nothing changes."""
    if _State.command:
        _State.finished, _State.held = True, None


def stop(exc: BaseException | type[BaseException]) -> None:
    """Raise ``exc`` (a signal handler's stop) now, or, inside a section, when it ends; raise it
    now all the same once the section has held a stop for ``LIMIT_S`` seconds. After
    ``finished()``, drop it."""
    if _State.finished:
        return
    if not _State.depth:
        raise exc
    since = time.monotonic() if _State.held is None else _State.held[1]
    if time.monotonic() - since >= LIMIT_S:
        _State.held = None
        raise exc
    _State.held = (exc, since)

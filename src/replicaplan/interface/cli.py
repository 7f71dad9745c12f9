"""The ``replicaplan`` command: the book's analyses on a reader's own numbers.

replicaplan day [--mu-star 8] [--target 0.8] [--startup 8] [--reserve 3] [--json]
replicaplan capacity [--model replica|mm1] [--rates 1:10:0.5] [--quota 0.9] [--json] ...
replicaplan cost [--replica-price 2] [--tokens-per-s 2560] [--utilization 0.36] [--discount 0.6 ...]
replicaplan roofline [--params 8e9] [--batch 64] [--context 2000] [--tpot 0.025] ...
replicaplan plan --log requests.csv | --rates minutes.csv [--model … --gpu …] [--report DIR] ...
replicaplan fit --bench result.json --model … --gpu … [--out replica.json]
replicaplan search --log requests.csv --model … [--gpu-grid …] [--gpu-price GPU=PRICE] ...

Each command is a module of ``interface.commands``; this one builds the parser from them and runs
the one asked for. Exit status: 0 done, 1 ``capacity`` found no μ* in its range, 2 bad input
(one line naming the flag, or the file and row; nothing written), 130 interrupted (Ctrl-C),
143 terminated (SIGTERM); an interrupted or terminated run leaves every output as it was. A
signal that comes once the outputs are in place has nothing left to stop: the run ends as it
succeeded (``core.stops``).

Layer: interface.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from replicaplan.core import stops
from replicaplan.interface.commands import COMMANDS


class _Parser(argparse.ArgumentParser):
    """argparse, with its refusals on one line like every other error of the command
    (``replicaplan plan: error: argument --startup: …``); ``--help`` shows the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="replicaplan",
        description="How many replicas to keep on, and what that capacity costs.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"replicaplan.interface.commands.{name}").add(sub)
    return parser


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)
"""Ctrl-C, a kill, and the alarm that repeats either until the command has stopped."""


class Terminated(BaseException):
    """SIGTERM (a ``kill``, a container stopped), raised where the program is so that the staged
    outputs are removed as on Ctrl-C; a BaseException, so no ``except Exception`` keeps it."""


_STOP: list = []
"""The exception a signal asked for (KeyboardInterrupt or Terminated), once one has come."""
AGAIN_S = 0.2
"""How often the stop is raised again until the command ends: an exception raised while a
destructor or a finalizer runs is printed and dropped by Python, and the run would go on as if
never asked to stop (seen: a search that kept running for minutes after one Ctrl-C, under
load, in the test that sends it; and a plan that finished and printed its answer after a
Ctrl-C that came during an import, when the stop was repeated only once a second)."""


def _unraisable(info) -> None:
    """Python's report of an exception it could not raise (inside a destructor, a weakref
    callback, an import lock's clean-up), while a command runs: a stop is left unsaid, since
    the alarm raises it again where it can be raised (seen: "Exception ignored in: <function
    _get_module_lock.<locals>.cb>" and its traceback over a Ctrl-C that came during an
    import); anything else is reported as Python would."""
    if _STOP and isinstance(info.exc_value, (KeyboardInterrupt, Terminated)):
        return
    _PYTHONS_HOOK[0](info)


_PYTHONS_HOOK: list = [sys.unraisablehook]


def _child_defaults() -> None:
    """In a process forked while a command runs (a pool's worker), before it runs any Python:
    SIGTERM and SIGALRM back to the kernel's defaults, so that a pool's terminate() ends the
    worker with no Python code to run first (a worker blocked on the pool's queue lock could
    not run it: seen as a pool that never finished terminating), and Ctrl-C ignored: a terminal
    sends it to the whole group, and the parent, which acts on it, ends its workers."""
    if _STOP_HANDLERS:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)


_STOP_HANDLERS: list = []
"""Non-empty while ``main`` has its stop handlers installed."""
os.register_at_fork(after_in_child=_child_defaults)


def _stop(signum, frame):
    if signum != signal.SIGALRM:
        _STOP[:] = [KeyboardInterrupt if signum == signal.SIGINT else Terminated]
        signal.setitimer(signal.ITIMER_REAL, AGAIN_S, AGAIN_S)
    if _STOP:
        stops.stop(_STOP[0])  # now, or where a section that must finish ends (core.stops)


def _fresh_line() -> str:
    """A line break before the last message on a terminal (it ends a progress bar, or the ^C the
    terminal echoed); none in a file or a pipe, where the message is then exactly one line."""
    return "\n" if sys.stderr.isatty() else ""


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help (0), or a flag refused by its type (2), said by argparse
        return int(stop.code or 0)
    _STOP.clear()
    stops.begin()
    previous = {s: signal.signal(s, _stop) for s in STOP_SIGNALS}
    _STOP_HANDLERS.append(True)
    _PYTHONS_HOOK[0], sys.unraisablehook = sys.unraisablehook, _unraisable
    try:
        result = args.run(args)
        text, status = result if isinstance(result, tuple) else (result, 0)
        # still under the command's handlers: a stop now ends a run that wrote nothing with
        # its one line, and is dropped once outputs are in place (core.stops.finished)
        print(text)
        return status
    except ValueError as err:
        print(f"replicaplan {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # every output is staged, so an interrupt leaves nothing behind
        signal.setitimer(signal.ITIMER_REAL, 0)
        print(
            f"{_fresh_line()}replicaplan {args.command}: interrupted; nothing written",
            file=sys.stderr,
        )
        return 130
    except Terminated:
        signal.setitimer(signal.ITIMER_REAL, 0)
        print(
            f"{_fresh_line()}replicaplan {args.command}: terminated; nothing written",
            file=sys.stderr,
        )
        return 143
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _STOP_HANDLERS.clear()
        sys.unraisablehook = _PYTHONS_HOOK[0]
        for s, handler in previous.items():
            # the program ends next: a stop while the interpreter shuts down has nothing left
            # to stop, and would only turn the exit status into "killed" (core.stops.finished)
            signal.signal(s, signal.SIG_IGN if _PROGRAM and s != signal.SIGALRM else handler)
        stops.end()  # after the handlers: while they run, a stop after the outputs is dropped


_PROGRAM: list = []
"""Non-empty when ``main`` runs as the program (``program``), not called from Python."""


def program() -> int:
    """The ``replicaplan`` command: ``main`` on the process's own arguments, after which the
    process ends (the console script's entry point)."""
    _PROGRAM.append(True)
    return main()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(program())

"""Stops that wait for a section to end (core.stops), and why a signal mask would not do."""

import os
import signal
import threading

import pytest

from replicaplan.core import stops


def _no_section_running() -> None:
    """Outside every section, a stop is raised at once."""
    with pytest.raises(KeyboardInterrupt):
        stops.stop(KeyboardInterrupt)


def test_outside_a_section_a_stop_is_raised_at_once():
    _no_section_running()


def test_inside_a_section_a_stop_waits_for_the_outermost_to_end():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with stops.held():
            with stops.held():
                stops.stop(KeyboardInterrupt)
                done.append("inner")
            stops.stop(KeyboardInterrupt)  # still held: the outer section is running
            done.append("outer")  # the inner end did not raise
    assert done == ["inner", "outer"]
    _no_section_running()
    with stops.held():  # nothing is left over for the next section
        pass


def test_the_last_stop_held_is_the_one_raised():
    class Terminated(BaseException):
        pass

    with pytest.raises(Terminated):
        with stops.held():
            stops.stop(KeyboardInterrupt)
            stops.stop(Terminated)


def test_a_section_that_holds_a_stop_ten_seconds_is_cut(monkeypatch):
    """A section holds a stop for at most 10 s from the first one (a hung pool or filesystem
    cannot swallow a Ctrl-C): held at 9.5 s, raised inside the section at 10 s."""
    now = [100.0]
    monkeypatch.setattr(stops.time, "monotonic", lambda: now[0])
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with stops.held():
            stops.stop(KeyboardInterrupt)  # held: the first stop, at t = 100 s
            now[0] += 9.5
            stops.stop(KeyboardInterrupt)  # held: 9.5 s after the first
            reached.append(True)
            now[0] += 0.5
            stops.stop(KeyboardInterrupt)  # 10 s: raised here, inside the section
            reached.append(False)
    assert reached == [True]
    _no_section_running()


def test_a_real_signal_in_a_section_is_raised_after_the_section_has_finished():
    previous = signal.signal(signal.SIGUSR1, lambda *_: stops.stop(KeyboardInterrupt))
    finished = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with stops.held():
                os.kill(os.getpid(), signal.SIGUSR1)
                finished.extend(range(1000))  # the handler has run by now, and held the stop
        assert len(finished) == 1000
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_signal_mask_in_the_main_thread_does_not_hold_a_signal_when_another_thread_exists():
    """The reason for core.stops: with the signal masked in the main thread, the kernel gives it
    to a thread that has it unmasked (numpy's BLAS threads are such threads), and Python runs
    the handler in the main thread all the same."""
    ran = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: ran.append(True))
    idle = threading.Event()
    other = threading.Thread(target=idle.wait)  # started before the mask: SIGUSR1 unmasked
    other.start()
    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        try:
            os.kill(os.getpid(), signal.SIGUSR1)
            for _ in range(200):  # the handler runs at one of these bytecodes
                if ran:
                    break
                threading.Event().wait(0.01)
            assert ran == [True]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    finally:
        idle.set()
        other.join()
        signal.signal(signal.SIGUSR1, previous)


def test_once_finished_a_stop_held_or_to_come_is_dropped_until_the_command_ends():
    stops.begin()
    try:
        with stops.held():
            stops.stop(KeyboardInterrupt)
            stops.finished()  # the outputs are in place: the held stop is dropped
        stops.stop(KeyboardInterrupt)  # and one to come, outside any section
    finally:
        stops.end()
    _no_section_running()  # after the command, stops act again


def test_outside_a_command_finishing_changes_nothing():
    """Outputs written outside a command (a test, a notebook) leave stops acting."""
    stops.finished()
    _no_section_running()

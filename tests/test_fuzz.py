"""The planner fuzzed as a user would feed it (hypothesis): log rows, rate series and options.

Whatever the input, ``replicaplan plan`` either exits 0 having written every output it was
asked for, or exits 2 with one message on stderr and nothing written; it never lets an exception
out (a traceback), and no input runs longer than a minute. Bounded: a fixed number of examples
drawn from a fixed seed (``derandomize``), so CI sees the same inputs every run.
"""

from __future__ import annotations

import gzip
import io
import resource
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from replicaplan.interface.cli import main

HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens"

numbers = st.one_of(
    st.integers(-5, 5_000),
    st.sampled_from(["0", "-1", "12345678901234567890", "1e9", "x", "", "nan", "3.5"]),
)


@st.composite
def stamps(draw, n: int):
    """``n`` timestamps of one of the forms users export, mostly in order, sometimes not."""
    form = draw(st.sampled_from(["seconds", "date", "zoned", "mixed", "junk"]))
    step = draw(st.floats(0.01, 120, allow_nan=False))
    t = [k * step for k in range(n)]
    if draw(st.booleans()):  # one row out of place, or a huge or non-finite one
        t[draw(st.integers(0, n - 1))] = draw(st.sampled_from([-5.0, 1e12, 1e300, float("nan")]))
    out = []
    for s in t:
        kind = form if form != "mixed" else draw(st.sampled_from(["seconds", "date", "zoned"]))
        if kind == "seconds" or s != s or abs(s) > 1e9:
            out.append(repr(s))
        elif kind == "junk":
            out.append(draw(st.sampled_from(["yesterday", "2023-13-45 25:61:00", "12:00", "-"])))
        else:
            whole = int(s)
            stamp = f"2023-11-16 {whole // 3600 % 24:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"
            out.append(stamp + ("+01:00" if kind == "zoned" else ""))
    return out


@st.composite
def clean_logs(draw) -> bytes:
    """A log the planner should accept: 10 to 20 minutes of requests, in order, sane lengths."""
    n = draw(st.integers(20, 60))
    span = draw(st.floats(600, 1200))
    lengths = st.integers(1, 3000)
    rows = [f"{k * span / (n - 1):.3f},{draw(lengths)},{draw(lengths)}" for k in range(n)]
    return ("\n".join([HEADER, *rows]) + "\n").encode()


@st.composite
def logs(draw) -> bytes:
    if draw(st.booleans()):
        return draw(clean_logs())
    n = draw(st.integers(1, 40))
    rows = [f"{s},{draw(numbers)},{draw(numbers)}" for s in draw(stamps(n))]
    header = draw(st.sampled_from([HEADER, HEADER, "\ufeff" + HEADER, "TIMESTAMP,ContextTokens"]))
    data = ("\n".join([header, *rows]) + "\n").encode()
    if draw(st.booleans()):
        data = data.replace(b"0,", b"\xe9,", 1) if draw(st.booleans()) else gzip.compress(data)
    return data


@st.composite
def rate_series(draw) -> bytes:
    if draw(st.booleans()):  # a series the planner should accept
        rates = draw(st.lists(st.floats(0.5, 80), min_size=12, max_size=40))
        return ("minute,rate_rps\n" + "".join(f"{m},{r}\n" for m, r in enumerate(rates))).encode()
    rates = draw(
        st.lists(
            st.one_of(
                st.floats(0, 200, allow_nan=False),
                st.sampled_from([-1.0, 1e9, 1e300, float("nan"), float("inf")]),
            ),
            min_size=1,
            max_size=30,
        )
    )
    return ("minute,rate_rps\n" + "".join(f"{m},{r}\n" for m, r in enumerate(rates))).encode()


options = st.lists(
    st.sampled_from(
        [
            ["--startup", "0"],
            ["--startup", "-3"],
            ["--startup", "9"],
            ["--batch", "0"],
            ["--batch", "4"],
            ["--batch", "1000000000"],
            ["--gpus", "2"],
            ["--model", "llama-3-8b", "--gpu", "a100-80gb"],
            ["--model", "llama-3-8b", "--gpu", "a100-80gb", "--gpus", "65"],
            ["--short-budget", "0"],
            ["--short-budget", "1.5"],
            ["--short-budget", "nan"],
            ["--max-replicas", "0"],
            ["--max-replicas", "1"],
            ["--max-replicas", "40"],
            ["--target", "0"],
            ["--target", "1.2"],
            ["--gpu-price", "-2"],
            ["--gpu-price", "inf"],
            ["--ttft-slo", "0"],
            ["--quota", "1.5"],
            ["--name", "Bad_Name"],
            ["--engine", "sglang"],
            ["--prometheus", "ftp://x"],
        ]
    ),
    max_size=3,
)


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    traffic=st.one_of(
        st.tuples(st.just("--log"), logs()), st.tuples(st.just("--rates"), rate_series())
    ),
    extra=st.one_of(st.just([]), options),
    report=st.booleans(),
)
@pytest.mark.slow
def test_plan_exits_0_with_every_output_or_2_with_nothing(tmp_path_factory, traffic, extra, report):
    work = tmp_path_factory.mktemp("fuzz")
    option, data = traffic
    source = work / "input.csv"
    source.write_bytes(data)
    out = work / "out"
    out.mkdir()
    files = {"--manifest": out / "hpa.yaml", "--keda": out / "keda.yaml"}
    if report:
        files["--report"] = out / "report"
    argv = ["plan", option, str(source), *[a for o in extra for a in o]]
    argv += [a for o, p in files.items() for a in (o, str(p))]
    stdout, stderr = io.StringIO(), io.StringIO()
    began = time.perf_counter()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(argv)  # an exception here is the traceback a user would see
    assert time.perf_counter() - began < 60
    # the process's peak memory so far (KiB on Linux): no input has taken it past 4 GiB
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 4 * 2**20
    event(f"exit {code}")
    if code == 0:
        assert all(p.exists() for p in files.values()), argv
        assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in files.values())
    else:
        assert code == 2, (argv, stderr.getvalue())
        message = stderr.getvalue().strip()
        assert message.startswith("replicaplan plan: error: ") and "\n" not in message, message
        assert "Traceback" not in message
        assert list(out.iterdir()) == [], argv


# ------------------------------------------------------------------ outputs that harm nothing
RATES = "minute,rate_rps\n" + "".join(f"{m},{2.0 + (m % 7)}\n" for m in range(30))

TARGETS = ["fresh", "the input", "an existing file", "a folder", "a symlink to the input",
           "a symlink to a file", "/dev/null", "a FIFO", "a missing folder"]  # fmt: skip


def _digests(folder) -> dict:
    """Every entry under ``folder`` (not following links): its kind and, for a file, a hash."""
    import hashlib
    import os

    out = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = os.path.join(root, name)
            if os.path.islink(path):
                out[path] = ("link", os.readlink(path))
            elif os.path.isfile(path):
                out[path] = ("file", hashlib.sha256(open(path, "rb").read()).hexdigest())
            else:
                out[path] = ("other", None)
    return out


def _target(kind: str, work, name: str, source):
    import os

    path = work / name
    if kind == "the input":
        return source
    if kind == "an existing file":
        path.write_text("an operator's own file\n")
    elif kind == "a folder":
        path.mkdir()
    elif kind == "a symlink to the input":
        path.symlink_to(source)
    elif kind == "a symlink to a file":
        (work / f"{name}.real").write_text("kept\n")
        path.symlink_to(work / f"{name}.real")
    elif kind == "/dev/null":
        return "/dev/null"
    elif kind == "a FIFO":
        os.mkfifo(path)
    elif kind == "a missing folder":
        return work / "no-such-folder" / name
    return path


@pytest.mark.slow
@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(manifest=st.sampled_from(TARGETS), keda=st.sampled_from(TARGETS))
def test_outputs_are_new_or_everything_is_as_it_was(tmp_path_factory, manifest, keda):
    """Whatever the targets (the input itself, a device, a FIFO, a folder, a link, a missing
    folder, an operator's file), the command ends with exit 0 and each output a new regular
    file, or exit 2 with every file as it was (hash-compared) and no staging file left."""
    work = tmp_path_factory.mktemp("targets")
    source = work / "rates.csv"
    source.write_text(RATES)
    targets = {
        "--manifest": _target(manifest, work, "hpa.yaml", source),
        "--keda": _target(keda, work, "keda.yaml", source),
    }
    before = _digests(work)
    argv = ["plan", "--rates", str(source), "--startup", "2"]
    argv += [a for option, path in targets.items() for a in (option, str(path))]
    stderr = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(stderr):
        code = main(argv)
    after = _digests(work)
    assert not [p for p in after if "/." in p], after  # no staging file
    assert after[str(source)] == before[str(source)]  # the input is never touched
    if code == 0:
        for path in targets.values():
            assert Path(path).is_file() and not Path(path).is_symlink()
            assert "apiVersion" in Path(path).read_text()
        changed = {p for p in after if before.get(p) != after[p]}
        assert changed <= {str(p) for p in targets.values()}, changed
    else:
        assert code == 2, stderr.getvalue()
        assert after == before, (argv, stderr.getvalue())
        assert stderr.getvalue().count("\n") == 1


def _run(argv: list[str]):
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "replicaplan.interface.cli", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ending=st.sampled_from(["SIGTERM", "SIGINT", "a second run"]),
    delay=st.sampled_from([0.05, 0.3, 0.6, 1.0, 2.5]),
    existing=st.booleans(),
)
def test_a_stopped_or_contended_run_leaves_the_old_plan_or_the_new_one(
    tmp_path_factory, ending, delay, existing
):
    """The run is stopped (SIGTERM, SIGINT) after ``delay`` seconds, or a second run writes the
    same outputs meanwhile; the outputs exist already or not. Each run ends with exit 0 and every
    output a whole new plan, or with exit 143, 130 or 2 and, if no run finished, every file as it
    was (hash-compared); no staging file is ever left. Two runs on one folder never both write:
    the second is refused by the lock, or starts after the first has finished."""
    import signal
    import time

    work = tmp_path_factory.mktemp("ending")
    source = work / "rates.csv"
    source.write_text(RATES)
    outputs = {"--manifest": work / "hpa.yaml", "--keda": work / "keda.yaml"}
    if existing:
        for path in outputs.values():
            path.write_text("an operator's own file\n")
    before = _digests(work)
    argv = ["plan", "--rates", str(source), "--startup", "2"]
    argv += [a for option, path in outputs.items() for a in (option, str(path))]
    first = _run(argv)
    # Ctrl-C in the first tenth of a second meets Python's own handler, before the command has
    # installed its own (a KeyboardInterrupt traceback, nothing written): a person is not that fast
    time.sleep(max(delay, 0.3) if ending == "SIGINT" else delay)
    second = None
    if ending == "a second run":
        second = _run(argv)
    else:
        first.send_signal(signal.SIGTERM if ending == "SIGTERM" else signal.SIGINT)
    codes = []
    for proc in (first, second):
        if proc is not None:
            _, err = proc.communicate(timeout=120)
            codes.append((proc.returncode, err))
    after = _digests(work)
    assert not [p for p in after if "/." in p], after  # no staging file
    assert after[str(source)] == before[str(source)]
    # SIGTERM before the command's handlers are in place kills the interpreter (-15): nothing
    # has been written yet, so that too must leave every file as it was
    allowed = {"a second run": {0, 2}, "SIGTERM": {0, 143, -15}, "SIGINT": {0, 130}}[ending]
    assert all(code in allowed for code, _ in codes), codes
    for code, err in codes:
        if code > 0:
            assert err.count("\n") == 1, err  # one line, never a traceback
        if code == 2:
            assert "another replicaplan run is writing in" in err, err
    if any(code == 0 for code, _ in codes):
        for path in outputs.values():
            text = path.read_text()
            assert "apiVersion" in text and "an operator's own file" not in text
    else:
        assert after == before, codes

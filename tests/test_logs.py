"""A reader's request logs and rate series (traffic.logs): read, checked, and every damaged file
refused in one line naming it."""

import gzip
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_loadgen import SAMPLE

from replicaplan.traffic import loadgen as lg
from replicaplan.traffic import logs

SAMPLE_LOG = SAMPLE / "conv_sample.csv"


def test_read_trace_of_seconds(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2.5,20,0\n5.0,10,3\n")
    tr = logs.read_trace(f)
    assert tr.arrival.tolist() == [0.0, 2.5] and tr.prompt.tolist() == [20, 10]
    assert tr.output.tolist() == [1, 3]  # a zero-token answer counts as one


def test_rate_per_minute_counts_whole_minutes():
    tr = logs.TraceFile(np.array([0.0, 30.0, 59.9, 60.0, 125.0]), np.ones(5), np.ones(5))
    assert tr.rate_per_minute().tolist() == [3 / 60, 1 / 60, 1 / 60]


def test_a_logs_length_mix_is_computed_once(monkeypatch):
    """The planner asks a log for its mix in two places; on ten million requests each would
    cost seconds."""
    log = logs.read_trace(SAMPLE_LOG)
    calls = []
    real = lg.LengthMix.from_lengths.__func__
    monkeypatch.setattr(
        lg.LengthMix,
        "from_lengths",
        classmethod(lambda cls, *a, **k: calls.append(1) or real(cls, *a, **k)),
    )
    from replicaplan.planner.plan import plan

    plan(log, n_requests=1000)
    assert len(calls) == 1


H = "TIMESTAMP,ContextTokens,GeneratedTokens\n"


@pytest.mark.parametrize(
    "text, match",
    [
        ("TIMESTAMP,ContextTokens\n1,2\n", "missing column.*GeneratedTokens"),
        ("TIMESTAMP,ContextTokens,GeneratedTokens\n1,2,3\n2,-5,3\n", "row 3.*from 0 to"),
        # crashes filed in #23, each now an error naming the row and the range
        (H + "2023-11-16 18:15:46.68,374,44\nNaN,1313,142\n", "row 3.*one form per log"),
        (H + "0,374,44\nNaN,1313,142\n", "row 3: TIMESTAMP must be a finite time"),
        (H + "0,374,44\ninf,1313,142\n", "row 3: TIMESTAMP must be a finite time"),
        (H + "0,12345678901234567890,44\n", "row 2: lengths must be from 0 to 10,000,000"),
        (H + "2023-11-16 18:15:46.68,374,44\n1700158000,1,2\n", "row 3.*a number of seconds"),
        (H + "0,374,44\n2023-11-16 18:15:46.68,1,2\n", "row 3.*a date-time, in a log"),
        (H + "0,374,44\n1e300,1313,142\n", "row 3.*a log may span at most 92 days"),
        # an offset on one row of a log without them: that row named, not the next
        (
            H + "2023-11-16 18:15:46,1,2\n2023-11-16 18:15:47+01:00,1,2\n2023-11-16 18:15:48,1,2\n",
            "row 3.*date-time with offset, in a log whose first row gives a date-time",
        ),
        (
            H + "2023-11-16 18:15:46Z,1,2\n2023-11-16 18:15:47,1,2\n",
            "row 3.*a date-time, in a log whose first row gives a date-time with offset",
        ),
        (
            H + "2023-11-16 18:15:46+01:00,1,2\n2023-11-16 18:15:47+24:00,1,2\n",
            "row 3.*offset \\+24:00 is not a time-zone offset",
        ),
        (H + "0,374,44\n1e12,1313,142\n", "row 3.*a log may span at most 92 days"),
        ("TIMESTAMP,ContextTokens,GeneratedTokens\n1,2,x\n", "row 2.*unreadable"),
        ("TIMESTAMP,ContextTokens,GeneratedTokens\n", "no requests"),
        ("TIMESTAMP,ContextTokens,GeneratedTokens\n5,2,3\n6,2,3\n4,2,3\n", "row 4.*earlier"),
    ],
)
def test_bad_trace_files(tmp_path, text, match):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=match) as err:
        logs.read_trace(f)
    assert "bad.csv" in str(err.value)


def test_vendored_sample_is_the_documented_one(sample):
    code = logs.read_trace(SAMPLE / "code_sample.csv")
    assert sample.prompt.size == 3228 and code.prompt.size == 2205  # every 6th, every 4th
    for t in (sample, code):
        assert t.arrival[0] == 0 and np.all(np.diff(t.arrival) >= 0)
        assert t.prompt.min() >= 1 and t.output.min() >= 1
        assert 3300 < t.arrival[-1] < 3600  # the sample spans the trace's hour
    # code completion is the bursty service: its gaps vary far more than the conversation's
    gaps_cv = [np.std(np.diff(t.arrival)) / np.mean(np.diff(t.arrival)) for t in (sample, code)]
    assert gaps_cv[1] > 5 * gaps_cv[0]


def test_chunks_read_as_one(monkeypatch, tmp_path):
    whole = logs.read_trace(SAMPLE_LOG)
    seen = []
    monkeypatch.setattr(logs, "CHUNK_ROWS", 100)
    chunked = logs.read_trace(SAMPLE_LOG, progress=seen.append)
    for name in ("arrival", "prompt", "output"):
        assert np.array_equal(getattr(whole, name), getattr(chunked, name))
    assert whole.start == chunked.start > 1.7e9  # 2023-11-16, on the epoch's clock
    assert len(seen) == math.ceil(3228 / 100) and seen == sorted(seen) and seen[-1] == 1.0
    # errors across a chunk's edge name the right row
    f = tmp_path / "t.csv"
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n1,2,3\n2,2,3\n1.5,2,3\n")
    monkeypatch.setattr(logs, "CHUNK_ROWS", 2)
    with pytest.raises(ValueError, match="row 4.*earlier"):
        logs.read_trace(f)
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n1,2,3\n2,2,3\n3,2,x\n")
    with pytest.raises(ValueError, match="row 4.*unreadable"):
        logs.read_trace(f)
    f.write_text(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 10:00:00,2,3\nnot a date,2,3\n"
    )
    with pytest.raises(ValueError, match="row 3.*unreadable"):
        logs.read_trace(f)


@pytest.mark.parametrize(
    "text, match",
    [
        ("minute,rate\n0,1\n", "missing column.*rate_rps"),
        ("minute,rate_rps\n0,1\n2,1\n", "row 3: minute must be 1"),
        ("minute,rate_rps\n0,1\n1,-2\n", "row 3: rate_rps must be from 0 to 1,000,000"),
        ("minute,rate_rps\n0,1\n1,1e300\n", "row 3: rate_rps must be from 0 to 1,000,000"),
        ("minute,rate_rps\n0,1\n1,1e9\n", "row 3: rate_rps must be from 0 to 1,000,000"),
        ("minute,rate_rps\n0,abc\n", "row 2: unreadable"),
        ("minute,rate_rps\n0,nan\n", "row 2: rate_rps"),
        ("minute,rate_rps\n", "no minutes"),
    ],
)
def test_bad_rate_series(tmp_path, text, match):
    f = tmp_path / "rates.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=match) as err:
        logs.read_rate_series(f)
    assert "rates.csv" in str(err.value)


@pytest.mark.parametrize(
    "rows",
    [
        # date-times with fractions of every length, padding, and a zero-token answer
        [
            " 2024-03-04 00:00:00.5 ,10,3",
            "2024-03-04 00:00:01,20,0",
            "2024-03-04T00:00:01.123456,30,4",
            "2024-03-04 00:00:02.1234567,40,5",
            "2024-03-04 23:59:59.999999,1,1",
        ],
        # seconds, in every spelling a float takes
        ["0,10,3", "0.25,20,1", "1e1,5,5", "  12.5 ,7,2", "1.3e+01,1,1"],
    ],
)
def test_the_fast_reader_gives_the_chunked_readers_arrays_bit_for_bit(tmp_path, monkeypatch, rows):
    """pyarrow's whole-file read and the chunked csv reader agree exactly, or pyarrow declines
    (an odd stamp) and the chunked reader decides."""
    f = tmp_path / "log.csv"
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "\n".join(rows) + "\n")
    monkeypatch.setattr(logs, "ARROW_MIN_BYTES", 0)  # pyarrow's reader, however small the log
    fast = logs.read_trace(f)
    monkeypatch.setattr(logs, "_read_with_arrow", lambda path: None)
    slow = logs.read_trace(f)
    for name in ("arrival", "prompt", "output"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert fast.start == slow.start


def test_blank_lines_are_skipped_by_both_readers_and_rows_keep_their_numbers(tmp_path, monkeypatch):
    """A blank line anywhere (a log ending in one, as ``vllm bench serve`` leaves it, or two
    logs pasted together) is skipped by the chunked reader as by pyarrow's, and an error
    further on names the row by its line in the file, blank lines counted."""
    f = tmp_path / "log.csv"
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n0,10,3\n\n5,20,1\n\n")
    chunked = logs.read_trace(f)
    monkeypatch.setattr(logs, "ARROW_MIN_BYTES", 0)
    by_arrow = logs.read_trace(f)
    assert chunked.arrival.tolist() == by_arrow.arrival.tolist() == [0.0, 5.0]
    assert chunked.prompt.tolist() == by_arrow.prompt.tolist() == [10, 20]
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n0,10,3\n\n5,x,1\n")
    with pytest.raises(ValueError, match=r"log.csv, row 4: unreadable value"):
        logs.read_trace(f)
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n\n\n")
    with pytest.raises(ValueError, match="no requests"):
        logs.read_trace(f)


def test_a_small_log_is_read_without_pyarrow_and_a_large_one_with_it(tmp_path, monkeypatch):
    """Below ``ARROW_MIN_BYTES`` the chunked reader reads the log (importing pyarrow would take
    longer than reading it); from it on, pyarrow does. A fresh process shows the first."""
    import subprocess
    import sys

    code = (
        "import sys; from replicaplan.traffic import logs; "
        f"logs.read_trace({str(SAMPLE_LOG)!r}); print('pyarrow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert SAMPLE_LOG.stat().st_size < logs.ARROW_MIN_BYTES
    used = []
    monkeypatch.setattr(logs, "_read_with_arrow", lambda path: used.append(path))
    monkeypatch.setattr(logs, "ARROW_MIN_BYTES", SAMPLE_LOG.stat().st_size)
    logs.read_trace(SAMPLE_LOG)
    assert used == [SAMPLE_LOG]


def test_the_fast_reader_declines_what_is_not_clean(tmp_path):
    """Every kind of bad row makes the fast path step aside (then the chunked reader names it)."""
    header = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    for body in ("5,20,3\n4,20,3\n", "5,20,-3\n", "5,x,3\n", "5,20\n", "nan,1,1\n", ""):
        f = tmp_path / "bad.csv"
        f.write_text(header + body)
        assert logs._read_with_arrow(f) is None, body
    f.write_text("TIMESTAMP,ContextTokens\n5,20\n")
    assert logs._read_with_arrow(f) is None


def test_a_trace_spanning_more_than_the_limit_is_refused_before_any_array():
    # a TraceFile built in Python, not read: its per-minute rates would take 124 GiB
    far = logs.TraceFile(np.array([0.0, 1e12]), np.array([1, 1]), np.array([1, 1]))
    with pytest.raises(ValueError, match="span 0 to 92 days"):
        far.rate_per_minute()


def test_a_gzipped_log_and_a_byte_order_mark_read_as_the_plain_log(tmp_path, sample):
    plain = SAMPLE_LOG.read_bytes()
    packed = tmp_path / "log.csv"  # gzip whatever the name: a log often is
    packed.write_bytes(gzip.compress(plain))
    marked = tmp_path / "bom.csv"
    marked.write_bytes(b"\xef\xbb\xbf" + plain)
    for other in (logs.read_trace(packed), logs.read_trace(marked)):
        np.testing.assert_array_equal(other.arrival, sample.arrival)
        np.testing.assert_array_equal(other.prompt, sample.prompt)
        assert other.start == sample.start
    # the chunked reader too (the Arrow reader declines a log with a bad row further down)
    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(gzip.compress(plain + b"2099-01-01 00:00:00,-1,1\n"))
    last_row = plain.count(b"\n") + 1  # the header is row 1
    with pytest.raises(ValueError, match=f"row {last_row}: lengths"):
        logs.read_trace(broken)
    series = tmp_path / "rates.csv"
    series.write_bytes(gzip.compress(b"\xef\xbb\xbfminute,rate_rps\n0,1.5\n1,2\n"))
    assert logs.read_rate_series(series).tolist() == [1.5, 2.0]


def test_a_byte_that_is_not_utf8_names_its_row(tmp_path):
    f = tmp_path / "latin1.csv"
    f.write_bytes(b"TIMESTAMP,ContextTokens,GeneratedTokens\n0,1,2\n1,2,3\n2,3\xe9,4\n")
    with pytest.raises(ValueError, match="row 4: byte 0xe9 is not UTF-8"):
        logs.read_trace(f)
    g = tmp_path / "rates.csv"
    g.write_bytes(b"minute,rate_rps\n0,1\n1,\xe92\n")
    with pytest.raises(ValueError, match="row 3: byte 0xe9 is not UTF-8"):
        logs.read_rate_series(g)


def test_time_zone_offsets_are_moved_to_utc(tmp_path, recwarn):
    """Offsets are honoured: the same instants written in three zones (and across a change of
    daylight-saving time) read as the same seconds, in order, with no numpy warning."""
    f = tmp_path / "zones.csv"
    f.write_text(
        H
        + "2024-03-31 01:59:00+01:00,10,1\n"  # 00:59 UTC: Paris, the last minute of winter time
        + "2024-03-31 03:00:30+02:00,11,2\n"  # 01:00:30 UTC in summer time: 90 s later, not 1 h
        + "2024-03-30 21:01:00-0400,12,3\n"  # 01:01 UTC the next day in New York's offset
        + "2024-03-31T01:02:00Z,13,4\n"
    )
    trace = logs.read_trace(f)
    np.testing.assert_array_equal(trace.arrival, [0.0, 90.0, 120.0, 180.0])
    assert trace.start == 1711846740.0  # 2024-03-31 00:59:00 UTC (`date -u -d ... +%s`)
    assert not [w for w in recwarn if "timezone" in str(w.message)]


def test_a_parquet_log_names_its_first_bad_row(tmp_path):
    """Parquet rows counted from 1 (no header row): the earliest row that breaks a rule is
    named, whichever rule it breaks, as in a CSV log."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(stamps, prompts):
        f = tmp_path / "log.parquet"
        pq.write_table(
            pa.table(
                {
                    "TIMESTAMP": stamps,
                    "ContextTokens": prompts,
                    "GeneratedTokens": [5] * len(stamps),
                }
            ),
            f,
        )
        return f

    with pytest.raises(ValueError, match=r"log.parquet, row 3: TIMESTAMP is earlier"):
        logs.read_trace(write([0.0, 2.0, 1.0, 3.0], [1, 1, 1, -1]))
    with pytest.raises(ValueError, match=r"log.parquet, row 2: lengths must be from 0"):
        logs.read_trace(write([0.0, 2.0, 1.0], [1, -1, 1]))
    with pytest.raises(ValueError, match=r"log.parquet, row 2: TIMESTAMP must be a finite"):
        logs.read_trace(write([0.0, float("nan")], [1, 1]))
    with pytest.raises(ValueError, match=r"log.parquet, row 2: TIMESTAMP is 93 days after"):
        logs.read_trace(write([0.0, 93 * 86_400.0], [1, 1]))


# ------------------------------------------------------------------ damaged files, one line each
HEAD = "TIMESTAMP,ContextTokens,GeneratedTokens\n"


def _gz(text: str) -> bytes:
    import gzip

    return gzip.compress(text.encode())


@pytest.mark.parametrize(
    "data, match",
    [
        (_gz(HEAD + "0,1,2\n" * 100)[:40], "a damaged gzip file"),  # truncated
        (b"\x1f\x8b" + b"not gzip at all", "a damaged gzip file"),  # gzip's magic, then junk
        ((HEAD + "0," + "7" * 200_000 + ",3\n").encode(), "not a CSV file of the expected shape"),
        ((HEAD + "0,1," + "2" * 3_000_000).encode(), "row 2: longer than 1,048,576 characters"),
        (("TIMESTAMP," + "9" * 3_000_000).encode(), "row 1: longer than 1,048,576 characters"),
        (
            b"TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n0,1,2,3\n",
            "ContextTokens appear more than once",
        ),
    ],
    ids=["truncated gzip", "fake gzip", "huge field", "no line break", "huge header", "twice"],
)
def test_a_damaged_log_is_one_error_naming_the_file(tmp_path, data, match):
    path = tmp_path / "log.csv"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=match) as err:
        logs.read_trace(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize(
    "data, match",
    [
        (_gz("minute,rate_rps\n" + "0,1.5\n" * 50)[:30], "a damaged gzip file"),
        (("minute,rate_rps\n0," + "1" * 3_000_000).encode(), "longer than 1,048,576"),
        (b"minute,rate_rps,minute\n0,1,0\n", "minute appear more than once"),
    ],
    ids=["truncated gzip", "no line break", "twice"],
)
def test_a_damaged_rate_series_is_one_error_naming_the_file(tmp_path, data, match):
    path = tmp_path / "rates.csv"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=match):
        logs.read_rate_series(path)


@pytest.mark.parametrize(
    "first, unit", [("1700000000000", "milliseconds"), ("1700000000000000", "microseconds")]
)
def test_epoch_milliseconds_are_named_not_read_as_seconds(tmp_path, first, unit):
    """An hour of log stamped in milliseconds since the epoch, read as seconds, would be 41
    days; the reader names the unit it sees and what to divide by."""
    path = tmp_path / "ms.csv"
    path.write_text(HEAD + f"{first},10,20\n{int(first) + 1000},10,20\n")
    with pytest.raises(ValueError, match=f"row 2: TIMESTAMP {first} looks like {unit}"):
        logs.read_trace(path)
    # seconds since the epoch are seconds
    path.write_text(HEAD + "1700000000.5,10,20\n1700000060,10,20\n")
    assert logs.read_trace(path).arrival[-1] == pytest.approx(59.5)


def test_the_epoch_unit_is_read_from_the_first_request_past_blank_lines(tmp_path):
    """A blank line before the first request (skipped by both readers) does not hide a
    millisecond epoch: the first request's stamp is checked, named by its line."""
    path = tmp_path / "ms.csv"
    path.write_text(HEAD + "\n1700000000000,10,20\n1700000001000,10,20\n")
    with pytest.raises(ValueError, match="row 3: TIMESTAMP 1700000000000 looks like milliseconds"):
        logs.read_trace(path)


def test_spikes_are_single_minutes_out_of_all_proportion():
    from replicaplan.traffic.logs import clip_spikes, spike_minutes

    flat = np.full(120, 3.0)
    assert spike_minutes(flat).size == 0
    assert spike_minutes(np.linspace(1, 500, 120)).size == 0  # a steep climb is traffic
    burst = flat.copy()
    burst[40:50] = 300.0  # ten minutes at 100×: a burst the fleet must serve, not a spike
    assert spike_minutes(burst).size == 0
    spiky = flat.copy()
    spiky[[0, 57, 119]] = [100.0, 999_999.0, 40.0]  # both ends compare with one neighbour
    assert list(spike_minutes(spiky)) == [0, 57, 119]
    clipped = clip_spikes(spiky)
    assert list(clipped[[0, 57, 119]]) == [3.0, 3.0, 3.0] and spike_minutes(clipped).size == 0
    assert spiky[57] == 999_999.0  # the input is left as it was


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=3, max_size=200))
def test_clipping_only_lowers_and_leaves_no_spike(values):
    from replicaplan.traffic.logs import clip_spikes, spike_minutes

    rate = np.array(values)
    clipped = clip_spikes(rate)
    assert np.all(clipped <= rate) and np.all(clipped >= 0)
    changed = np.flatnonzero(clipped != rate)
    assert set(changed) <= set(spike_minutes(rate))


def test_a_series_too_short_to_have_spikes_is_clipped_to_itself():
    """One or two minutes have no spike (a spike needs neighbours); clipping returns them as
    they are (it raised an IndexError on one minute before)."""
    from replicaplan.traffic.logs import clip_spikes, spike_minutes

    for rate in ([5.0], [1.0, 200.0]):
        assert spike_minutes(rate).size == 0
        assert clip_spikes(rate).tolist() == rate

"""A reader's own traffic from files: request logs (CSV, gzip or Parquet, with the Azure trace's
columns) and per-minute rate series, read in time order, checked row by row, and any damage
refused with the file and the row (``read_trace``, ``read_rate_series``). ``TraceFile`` turns a
log into the per-minute traffic of a day and the length mix of a capacity sweep.

Layer: traffic.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import itertools
import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replicaplan.core import _check
from replicaplan.traffic.loadgen import MAX_TOKENS, LengthMix

TRACE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
"""The columns of the Azure trace a request log gives."""


@dataclass(frozen=True)
class TraceFile:
    """A replayable trace: arrival seconds from the first request, and lengths.

    ``start`` is the first request's time in seconds since the Unix epoch (UTC) when the log
    gave dates, else 0; it places the log's minutes on the clock (``schedule.schedule``).
    """

    arrival: np.ndarray
    prompt: np.ndarray
    output: np.ndarray
    start: float = 0.0

    def rate_per_minute(self) -> np.ndarray:
        """Mean arrival rate (req/s) of each whole minute from the first request on.

        Minute k holds the requests with k·60 ≤ arrival < (k + 1)·60; the last, partial minute
        is divided by 60 as well, so a log that ends mid-minute shows a lower last value.
        """
        span = float(self.arrival[-1])
        if not (math.isfinite(span) and 0 <= span <= MAX_LOG_DAYS * 86_400):
            raise ValueError(
                f"the log must span 0 to {MAX_LOG_DAYS} days, got {span / 86_400:.3g} days"
            )
        minutes = int(self.arrival[-1] // 60) + 1
        counts = np.bincount((self.arrival // 60).astype(np.int64), minlength=minutes)
        return counts / 60.0

    def length_mix(self) -> LengthMix:
        """The joint length distribution of this trace as a ``LengthMix`` (``from_lengths``),
        computed once: the planner asks for it twice, and on a log of ten million requests each
        costs seconds."""
        mix = self.__dict__.get("_length_mix")
        if mix is None:
            mix = LengthMix.from_lengths(self.prompt, self.output)
            self.__dict__["_length_mix"] = mix  # a frozen instance: set past __setattr__
        return mix


CHUNK_ROWS = 250_000
"""Rows ``read_trace`` converts at a time: memory stays at the arrays plus one chunk of text."""
MAX_LOG_DAYS = 92
"""The longest span a log or a rate series may cover (a quarter): the plan keeps arrays of one
value a minute, and its replays one a second, over the whole span."""
MAX_RATE_RPS = 1_000_000.0
"""The highest arrival rate a rate series may give, requests a second."""
ARROW_MIN_BYTES = 3 * 2**19
"""The smallest log (1.5 MiB) read by pyarrow's multi-threaded reader. Importing pyarrow takes
about 80 ms, and the chunked reader about 1.8 µs a row: they cost the same near 50,000 rows
(about 1.6 MiB). Measured here: the vendored hour's 19,366 rows, 23 ms chunked and 104 ms
through pyarrow with its import; a million rows (34 MiB), 1.79 s chunked and 0.14 s by
pyarrow."""


def read_trace(path, *, progress=None) -> TraceFile:
    """Read a CSV with the columns TIMESTAMP, ContextTokens, GeneratedTokens.

    TIMESTAMP is an ISO date-time (fractions of a second beyond microseconds are cut) or a
    number of seconds, one form in a file. The file may be gzip-compressed (whatever its name)
    and may start with a UTF-8 byte-order mark; a byte that is not UTF-8 is an error naming its
    row. Rows must come in time order: a log out of order is more likely a broken
    export than a shuffled one, so it is an error, not silently sorted. A missing column, an
    unreadable value, a negative length or a timestamp earlier than the row before raises
    ValueError naming the file and the row.

    The file is read ``CHUNK_ROWS`` rows at a time, each chunk converted by numpy, so a log of
    millions of requests takes a few bytes a request. ``progress``, if given, is called after
    each chunk with the share of the file read (0 to 1).
    """
    path = Path(path)
    if _parquet(path):
        trace = _read_parquet(path)
        if progress is not None:
            progress(1.0)
        return trace
    with _damage_named(path), _open_text(path) as f:  # the header, before any fast reader
        rows = csv.reader(_bounded_lines(f, path))
        try:
            header = next(rows, [])
            first = next(
                (row for row in rows if row), None
            )  # the first request: blank lines skipped
        except UnicodeDecodeError as err:
            raise _not_utf8(path, err) from None
        (stamp_col, *_) = _column_indices(path, header, TRACE_COLUMNS)
    if first is not None and len(first) > stamp_col:
        _check_epoch_unit(path, rows.line_num, first[stamp_col])
    size = max(path.stat().st_size, 1)
    fast = _read_with_arrow(path) if size >= ARROW_MIN_BYTES else None
    if fast is not None:
        if progress is not None:
            progress(1.0)
        return fast
    times, prompts, outputs = [], [], []
    first_row = 2  # row 1 is the header
    previous = first_stamp = origin = None
    with _damage_named(path), _open_text(path) as f:
        raw = getattr(f.buffer, "fileobj", f.buffer)  # the compressed bytes of a gzip log
        reader = csv.reader(_bounded_lines(f, path))
        try:
            header = next(reader, [])
        except UnicodeDecodeError as err:
            raise _not_utf8(path, err) from None
        cols = _column_indices(path, header, TRACE_COLUMNS)
        width = max(cols) + 1
        while True:
            try:
                rows = list(itertools.islice(reader, CHUNK_ROWS))
            except UnicodeDecodeError as err:
                raise _not_utf8(path, err) from None
            if not rows:
                break
            numbers = range(first_row, first_row + len(rows))  # each row's number in the file
            first_row += len(rows)
            if not all(rows):  # blank lines, skipped anywhere, as pyarrow's reader skips them
                numbers = [n for n, row in zip(numbers, rows, strict=True) if row]
                rows = [row for row in rows if row]
                if not rows:
                    continue
            if first_stamp is None:
                first_stamp = rows[0][cols[0]]
            form = _form(first_stamp)
            t, p, o = _trace_chunk(path, rows, cols, width, numbers, form, origin)
            if previous is not None and t[0] < previous:
                raise ValueError(_out_of_order(path, numbers[0], rows[0][cols[0]]))
            if origin is None:
                origin = float(t[0])
            times.append(t)
            prompts.append(p)
            outputs.append(o)
            previous = t[-1]
            if progress is not None:
                progress(min(1.0, raw.tell() / size))  # bytes read ahead
    if not times:
        raise ValueError(f"{path}: no requests")
    t = np.concatenate(times)
    return TraceFile(
        t - t[0],
        np.concatenate(prompts),
        np.maximum(np.concatenate(outputs), 1),  # a zero-token answer counts as one
        start=float(t[0]) if _dated(first_stamp) else 0.0,
    )


def _read_with_arrow(path: Path) -> TraceFile | None:
    """The whole log read by pyarrow's multi-threaded CSV reader, when every row is clean.

    The columns are parsed by pyarrow (lengths) and by the same numpy conversion as the chunked
    reader (timestamps), so a clean log gives the same arrays bit for bit (tested). Anything
    short of clean (a missing column, an unreadable value, a negative length, a row out of
    order) returns None, and the chunked reader then finds the row and says what is wrong.
    """
    try:
        import pyarrow as pa
        from pyarrow import csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow is pinned in requirements.txt
        return None
    stamp, prompt, output = TRACE_COLUMNS
    try:
        source = pa.input_stream(str(path), compression="gzip") if _gzipped(path) else path
        table = pacsv.read_csv(
            source,
            convert_options=pacsv.ConvertOptions(
                include_columns=list(TRACE_COLUMNS),
                column_types={stamp: pa.string(), prompt: pa.int64(), output: pa.int64()},
                strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, OSError, ValueError):
        return None
    if table.num_rows == 0 or any(table.column(c).null_count for c in TRACE_COLUMNS):
        return None
    import pyarrow.compute as pc

    p = table.column(prompt).to_numpy()
    o = table.column(output).to_numpy()
    column = pc.utf8_trim_whitespace(table.column(stamp))
    del table
    dated = _dated(column[0].as_py())
    try:
        if dated:  # ISO date-times to microseconds since the epoch; anything odd is refused
            micro = pc.cast(column, pa.timestamp("us")).cast(pa.int64()).to_numpy()
            t = micro / 1e6
        else:
            t = pc.cast(column, pa.float64()).to_numpy()
    except (pa.ArrowException, ValueError):
        return None
    if _array_problem(t, p, o, t[0]) is not None:
        return None
    return TraceFile(
        t - t[0],
        p,
        np.maximum(o, 1),  # a zero-token answer counts as one
        start=float(t[0]) if dated else 0.0,
    )


def _parquet(path: Path) -> bool:
    """True when the file starts with Parquet's magic bytes (whatever its name)."""
    with path.open("rb") as f:
        return f.read(4) == b"PAR1"


def _read_parquet(path: Path) -> TraceFile:
    """A log in Parquet (a data lake's form), read with pyarrow: the same three columns, the
    timestamp a Parquet timestamp (its time zone honoured: stored as UTC), an ISO date-time
    string, or a number of seconds. Rows are named from 1 (Parquet has no header row); what
    is refused is what the CSV reader refuses."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    stamp, prompt, output = TRACE_COLUMNS
    try:
        names = pq.read_schema(path).names
        missing = [c for c in TRACE_COLUMNS if c not in names]
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {', '.join(missing)}; expected "
                f"{', '.join(TRACE_COLUMNS)}"
            )
        table = pq.read_table(path, columns=list(TRACE_COLUMNS))
    except (pa.ArrowException, OSError) as err:
        raise ValueError(f"{path}: not a readable Parquet file ({err})") from None
    if table.num_rows == 0:
        raise ValueError(f"{path}: no requests")
    if table.num_rows > MAX_LOG_DAYS * 86_400 * 1000:
        raise ValueError(f"{path}: {table.num_rows:,} rows is more than a log may hold")

    def row_error(k: int, what: str) -> ValueError:
        return ValueError(f"{path}, row {k + 1}: {what}")

    for name in TRACE_COLUMNS:
        nulls = table.column(name).null_count
        if nulls:
            k = int(np.flatnonzero(table.column(name).is_null().to_numpy(zero_copy_only=False))[0])
            raise row_error(k, f"{name} is missing")
    column = table.column(stamp)
    kind = column.type
    if pa.types.is_timestamp(kind):
        t = pc.cast(column, pa.timestamp("us", tz=kind.tz)).cast(pa.int64()).to_numpy() / 1e6
        dated = True
    elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
        t = column.to_numpy(zero_copy_only=False).astype(float)
        dated = False
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = column.to_pylist()
        form = _form(text[0])
        for k, value in enumerate(text):
            if _form(value) != form:
                raise row_error(
                    k,
                    f"TIMESTAMP {value!r} is a {_form(value)}, in a log whose first row gives a "
                    f"{form}: one form per log",
                )
        try:
            t = _seconds_array(text)
        except (ValueError, OverflowError) as err:
            bad = next(k for k, v in enumerate(text) if not _parses(v))
            raise row_error(bad, f"unreadable TIMESTAMP {text[bad]!r} ({err})") from None
        dated = form != "number of seconds"
    else:
        raise ValueError(f"{path}: TIMESTAMP has type {kind}; expected a timestamp, text or number")
    lengths = []
    for name in (prompt, output):
        values = table.column(name)
        if not pa.types.is_integer(values.type):
            raise ValueError(f"{path}: {name} has type {values.type}; expected integers")
        lengths.append(values.to_numpy(zero_copy_only=False).astype(np.int64))
    p, o = lengths
    problem = _array_problem(t, p, o, t[0])
    if problem is not None:
        raise row_error(*problem)
    return TraceFile(t - t[0], p, np.maximum(o, 1), start=float(t[0]) if dated else 0.0)


def _array_problem(t, p, o, origin: float) -> tuple[int, str] | None:
    """The first row (0-based) of a log's arrays that breaks a log's rules, with what is wrong,
    or None: a finite time, lengths from 0 to ``MAX_TOKENS``, time order, at most
    ``MAX_LOG_DAYS`` after ``origin`` (the log's first time). The one set of rules every reader
    applies (the CSV readers then name the row from its text, ``_first_bad_row``)."""
    rules = (
        (~np.isfinite(t), lambda k: f"TIMESTAMP must be a finite time, got {t[k]}"),
        (
            (p < 0) | (o < 0) | (p > MAX_TOKENS) | (o > MAX_TOKENS),
            lambda k: (
                f"lengths must be from 0 to {MAX_TOKENS:,} tokens, got "
                f"ContextTokens={p[k]}, GeneratedTokens={o[k]}"
            ),
        ),
        (
            np.r_[False, np.diff(t) < 0],
            lambda k: "TIMESTAMP is earlier than the row before; the log must be in time order",
        ),
        (
            t - origin > MAX_LOG_DAYS * 86_400,
            lambda k: (
                f"TIMESTAMP is {(t[k] - origin) / 86_400:.3g} days after the first row; a "
                f"log may span at most {MAX_LOG_DAYS} days"
            ),
        ),
    )
    first = [(int(np.argmax(bad)), i) for i, (bad, _) in enumerate(rules) if bad.any()]
    if not first:
        return None
    k, i = min(first)
    return k, rules[i][1](k)


def _parses(stamp: str) -> bool:
    try:
        return bool(np.isfinite(_seconds_array([stamp])).all())
    except (ValueError, OverflowError):
        return False


def _gzipped(path: Path) -> bool:
    """True when the file starts with gzip's magic bytes (whatever its name)."""
    with path.open("rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _open_text(path: Path):
    """The file as UTF-8 text for the csv module: gunzipped if it is gzip, a byte-order mark
    skipped if it has one (a spreadsheet's export)."""
    if _gzipped(path):
        return gzip.open(path, "rt", newline="", encoding="utf-8-sig")
    return path.open(newline="", encoding="utf-8-sig")


def _not_utf8(path: Path, err: UnicodeDecodeError) -> ValueError:
    """The error for a byte that is not UTF-8, naming the first row that holds one."""
    opener = gzip.open if _gzipped(path) else open
    with opener(path, "rb") as f:
        for row_no, line in enumerate(f, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as bad:
                byte = line[bad.start : bad.start + 1].hex()
                return ValueError(
                    f"{path}, row {row_no}: byte 0x{byte} is not UTF-8 text ({bad.reason}); "
                    "save the log as UTF-8"
                )
    return ValueError(f"{path}: not UTF-8 text ({err.reason})")  # pragma: no cover


def _column_indices(path, header: list[str], expected) -> list[int]:
    """Where each of the ``expected`` columns stands in ``header``; a missing one is an error
    naming the file."""
    missing = [c for c in expected if c not in header]
    if missing:
        raise ValueError(
            f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(expected)}"
        )
    twice = [c for c in expected if header.count(c) > 1]
    if twice:  # which of the two holds the data is a guess the planner does not make
        raise ValueError(f"{path}: column(s) {', '.join(twice)} appear more than once")
    return [header.index(c) for c in expected]


EPOCH_UNITS = ((1e17, "nanoseconds", 1e9), (1e14, "microseconds", 1e6), (1e11, "milliseconds", 1e3))
"""Numeric timestamps this large are not seconds: 10¹¹ s is the year 5138. (threshold, unit,
per second), the largest first."""


def _check_epoch_unit(path, row: int, stamp: str) -> None:
    """Refuse a numeric TIMESTAMP (``stamp``, of line ``row``) that counts milliseconds (or
    micro-, nanoseconds) since the epoch: read as seconds, an hour of log would be planned as
    41 days."""
    try:
        value = float(stamp)
    except ValueError:
        return  # a date-time, or an error the reader names with its row
    for threshold, unit, per_second in EPOCH_UNITS:
        if abs(value) >= threshold:
            raise ValueError(
                f"{path}, row {row}: TIMESTAMP {stamp.strip()} looks like {unit} since the epoch "
                f"({value / per_second:,.0f} s); the log's numeric timestamps are seconds: "
                f"divide them by {per_second:,.0f}"
            )


MAX_LINE_CHARS = 1 << 20
"""The longest row a log or a series may have (1 MiB): a row holds a time and two numbers, so a
longer one is not a log (a file with no line break is refused when its first MiB is read, not
after reading gigabytes into memory)."""


def _bounded_lines(f, path):
    """The lines of ``f`` for the csv module, each at most ``MAX_LINE_CHARS`` long."""
    row = 0
    while True:
        line = f.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        row += 1
        if len(line) > MAX_LINE_CHARS:
            raise ValueError(
                f"{path}, row {row}: longer than {MAX_LINE_CHARS:,} characters; a row of a "
                "request log holds a time and two lengths (is this the right file?)"
            )
        yield line


@contextlib.contextmanager
def _damage_named(path):
    """A damaged file (a truncated or corrupt gzip stream, a CSV field past the csv module's
    limit) as one ValueError naming the file, not a traceback."""
    try:
        yield
    except (EOFError, gzip.BadGzipFile, zlib.error) as err:
        raise ValueError(f"{path}: a damaged gzip file ({err})") from None
    except csv.Error as err:
        raise ValueError(f"{path}: not a CSV file of the expected shape ({err})") from None


def _out_of_order(path, row_no: int, stamp: str) -> str:
    return (
        f"{path}, row {row_no}: TIMESTAMP {stamp.strip()} is earlier than the row before; "
        "the log must be in time order"
    )


def _dated(stamp: str) -> bool:
    try:
        float(stamp)
    except ValueError:
        return True
    return False


def _trace_chunk(path, rows, cols, width, numbers, form: str, origin):
    """One chunk of rows as arrays (seconds, prompt, output), or the first bad row's error.

    ``numbers`` are the rows' numbers in the file (for the error); ``form`` is the file's form
    of timestamp (its first row's, see ``_form``); ``origin`` its first time in seconds (None
    for the first chunk)."""
    try:
        if any(len(r) < width for r in rows):
            raise ValueError("short row")
        stamps = [r[cols[0]] for r in rows]
        t = _seconds_array(stamps)
        p = np.array([r[cols[1]] for r in rows], dtype=np.int64)
        o = np.array([r[cols[2]] for r in rows], dtype=np.int64)
    except (ValueError, TypeError, OverflowError):
        t = p = o = None  # find the row by reading the chunk one row at a time
    start = origin if origin is not None else (t[0] if t is not None else 0.0)
    if t is None or _form(stamps[0]) != form or _array_problem(t, p, o, start) is not None:
        _first_bad_row(path, rows, cols, width, numbers, form, origin)
    return t, p, o


def _first_bad_row(path, rows, cols, width, numbers, form: str, origin) -> None:
    """Read the chunk one row at a time and raise the first row's error, naming the file, the
    row (1-based, the header being row 1) and the allowed range."""
    last = None
    for row_no, row in zip(numbers, rows, strict=True):
        where = f"{path}, row {row_no}"
        try:
            if len(row) < width:
                raise ValueError(f"{len(row)} fields, expected at least {width}")
            stamp = row[cols[0]].strip()
            if _form(stamp) != form:
                raise ValueError(
                    f"TIMESTAMP {stamp!r} is a {_form(stamp)}, in a log whose first row gives a "
                    f"{form}: one form per log"
                )
            t = float(_seconds_array([stamp])[0])
            p, o = int(row[cols[1]]), int(row[cols[2]])
        except (TypeError, ValueError, OverflowError) as err:
            raise ValueError(f"{where}: unreadable value ({err})") from None
        if not math.isfinite(t):
            raise ValueError(f"{where}: TIMESTAMP must be a finite time, got {stamp!r}")
        if not (0 <= p <= MAX_TOKENS and 0 <= o <= MAX_TOKENS):
            raise ValueError(
                f"{where}: lengths must be from 0 to {MAX_TOKENS:,} tokens, got "
                f"ContextTokens={p}, GeneratedTokens={o}"
            )
        if last is not None and t < last:
            raise ValueError(_out_of_order(path, row_no, row[cols[0]]))
        if origin is None:
            origin = t
        if t - origin > MAX_LOG_DAYS * 86_400:
            raise ValueError(
                f"{where}: TIMESTAMP {stamp} is {(t - origin) / 86_400:.3g} days after the "
                f"first row; a log may span at most {MAX_LOG_DAYS} days"
            )
        last = t
    raise AssertionError("a chunk failed to convert but no row is bad")  # pragma: no cover


_OFFSET = re.compile(r"^(.*\d)(Z|[+-]\d{2}(?::?\d{2})?)$")


def _form(stamp: str) -> str:
    """A timestamp's form: "number of seconds", "date-time", or "date-time with offset" (an
    ISO offset such as +01:00, or Z). A log keeps its first row's form."""
    if not _dated(stamp):
        return "number of seconds"
    return "date-time with offset" if _OFFSET.match(stamp.strip()) else "date-time"


def _offsets(text: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``text`` split into date-times without their offsets and the offsets in seconds, or
    None when no stamp carries one (the common case, checked without a Python loop)."""
    if not (
        np.char.endswith(text, "Z").any()
        or (np.char.rfind(text, "+") > 0).any()
        or (np.char.rfind(text, "-") >= 10).any()  # past the date's own dashes
    ):
        return None
    local, shift = [], np.zeros(text.size)
    for k, stamp in enumerate(text.tolist()):
        m = _OFFSET.match(stamp)
        if m is None:
            raise ValueError("a date-time without an offset among ones with offsets")
        local.append(m.group(1))
        zone = m.group(2)
        if zone != "Z":
            digits = zone[1:].replace(":", "")
            hours, minutes = int(digits[:2]), int(digits[2:] or 0)
            if hours > 23 or minutes > 59:
                raise ValueError(f"offset {zone} is not a time-zone offset")
            shift[k] = (1 if zone[0] == "+" else -1) * (hours * 3600 + minutes * 60)
    return np.asarray(local), shift


def _seconds_array(stamps: list[str]) -> np.ndarray:
    """Seconds (numbers, or ISO date-times as seconds since the epoch, UTC) of ``stamps``.

    Date-times with an offset (+01:00, -0500, Z) are moved to UTC, so a log written across a
    change of daylight-saving time stays in order; date-times without one are taken as they
    are (the Azure traces' form)."""
    if _dated(stamps[0]):
        text = np.char.strip(np.asarray(stamps, dtype=str))
        zoned = _offsets(text)
        if zoned is not None:
            text, shift = zoned
        dates = np.array(text, dtype="datetime64[us]")
        if np.isnat(dates).any():
            raise ValueError("a date-time is missing")
        seconds = dates.astype(np.int64) / 1e6
        return seconds - shift if zoned is not None else seconds
    return np.array(stamps, dtype=float)


RATE_COLUMNS = ("minute", "rate_rps")


def read_rate_series(path) -> np.ndarray:
    """Read a per-minute arrival-rate series: a CSV with the columns minute, rate_rps.

    ``minute`` counts whole minutes from the start (0, 1, 2, … with none missing, in order);
    ``rate_rps`` is that minute's mean arrival rate in requests per second (≥ 0, finite).
    Returns the rates; anything else raises ValueError naming the file and the row.
    """
    path = Path(path)
    rates = []
    with _damage_named(path), _open_text(path) as f:
        reader = csv.reader(_bounded_lines(f, path))
        try:
            header = [h.strip() for h in next(reader, [])]
            i_min, i_rate = _column_indices(path, header, RATE_COLUMNS)
            numbered = list(enumerate(reader, start=2))
        except UnicodeDecodeError as err:
            raise _not_utf8(path, err) from None
        for row_no, row in numbered:
            try:
                minute, rate = int(row[i_min]), float(row[i_rate])
            except (IndexError, ValueError) as err:
                raise ValueError(f"{path}, row {row_no}: unreadable value ({err})") from None
            if minute != len(rates):
                raise ValueError(
                    f"{path}, row {row_no}: minute must be {len(rates)} (whole minutes from 0, "
                    f"in order, none missing), got {minute}"
                )
            if not (math.isfinite(rate) and 0 <= rate <= MAX_RATE_RPS):
                raise ValueError(
                    f"{path}, row {row_no}: rate_rps must be from 0 to {MAX_RATE_RPS:,.0f} "
                    f"requests a second, got {row[i_rate].strip()}"
                )
            if minute >= MAX_LOG_DAYS * 1440:
                raise ValueError(
                    f"{path}, row {row_no}: a rate series may span at most {MAX_LOG_DAYS} days "
                    f"({MAX_LOG_DAYS * 1440:,} minutes)"
                )
            rates.append(rate)
    if not rates:
        raise ValueError(f"{path}: no minutes")
    return np.array(rates)


SPIKE_FACTOR = 10.0
"""A minute is a spike when its rate is more than this many times both its neighbours' and the
log's median minute: one minute out of all proportion to the minutes around it, a burst of one
client or a broken clock rather than traffic a fleet should be sized for. A real burst lasts
longer than a minute, and a rise that climbs over several minutes is never one."""


def _larger_neighbour(rate: np.ndarray) -> np.ndarray:
    """Each minute's larger neighbour (three minutes or more); an end minute has one."""
    padded = np.r_[rate[1], rate, rate[-2]]
    return np.maximum(padded[:-2], padded[2:])


def spike_minutes(rate, factor: float = SPIKE_FACTOR) -> np.ndarray:
    """Indices of the minutes of ``rate`` (req/s per minute) above ``factor`` times the larger of
    their neighbours and above ``factor`` times the median minute (``SPIKE_FACTOR``)."""
    rate = _check.rates("rate", rate)
    factor = _check.positive("factor", factor)
    if rate.size < 3:
        return np.array([], dtype=int)
    floor = factor * float(np.median(rate))
    return np.flatnonzero((rate > factor * _larger_neighbour(rate)) & (rate > floor))


def clip_spikes(rate, factor: float = SPIKE_FACTOR) -> np.ndarray:
    """``rate`` with each of its ``spike_minutes`` lowered to the larger of its neighbours."""
    rate = _check.rates("rate", rate).astype(float)
    spikes = spike_minutes(rate, factor)
    if spikes.size:
        rate[spikes] = _larger_neighbour(rate)[spikes]
    return rate

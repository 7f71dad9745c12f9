"""Text for people (interface.report): the published policy table, digit for digit, as text."""

from replicaplan.interface.report import clock, event_request_line, policy_table_text
from replicaplan.scenarios.studies import policy_table

# the source's table, as printed there (hours, uncovered, queued, excess, use)
PUBLISHED = [
    ("192.0", "0", "0", "0.00%", "36.1%"),
    ("94.4", "1", "2", "0.08%", "73.5%"),
    ("94.4", "8", "20", "0.63%", "74.3%"),
    ("166.4", "8", "8", "0.05%", "42.0%"),
    ("96.1", "0", "0", "0.00%", "73.4%"),
]


def test_clock():
    assert (clock(0), clock(21 * 60 - 1), clock(1439)) == ("00:00", "20:59", "23:59")


def test_the_printed_table_carries_the_published_figures():
    lines = policy_table_text(policy_table()).splitlines()
    assert lines[0].split()[:2] == ["policy", "hours"]
    for line, figures in zip(lines[1:], PUBLISHED, strict=True):
        assert line.split()[-5:] == list(figures), line


def test_the_event_line_names_the_minute_before_and_the_minute_of_the_step():
    # 12 req/s at 20:59 asks ⌈12/6.4⌉ = 2 replicas, 42 req/s at 21:00 asks ⌈42/6.4⌉ = 7
    assert event_request_line() == "replicas requested: 2 at 20:59, 7 at 21:00"

import sys
from pathlib import Path

# the simpy reference model lives beside the tests (it is a test oracle, not part of the package)
sys.path.insert(0, str(Path(__file__).parent))


import pytest  # noqa: E402

SAMPLE_LOG = Path(__file__).resolve().parents[1] / "data/azure-llm-inference-2023/conv_sample.csv"


@pytest.fixture(scope="session")
def sample():
    """The vendored sample of the Azure conversation trace, read once for every test file."""
    from replicaplan.traffic import logs

    return logs.read_trace(SAMPLE_LOG)


@pytest.fixture
def checks_made(monkeypatch):
    """The names each input check of ``core._check`` is called with from now on, by kind:
    ``checks_made["fraction"]`` lists them in order. ``REPLICAPLAN_JOBS=1`` keeps every run in
    this process, where the calls are seen. For the tests that a checked object is trusted."""
    from collections import defaultdict

    from replicaplan.core import _check

    seen: defaultdict[str, list[str]] = defaultdict(list)

    def counted(kind):
        real = getattr(_check, kind)

        def counting(name, *args, **kwargs):
            if not (kind == "rates" and _check.checked_rates(*args)):  # remembered, not checked
                seen[kind].append(name)
            return real(name, *args, **kwargs)

        return counting

    for kind in ("positive", "non_negative", "fraction", "integer", "rates"):
        monkeypatch.setattr(_check, kind, counted(kind))
    monkeypatch.setenv("REPLICAPLAN_JOBS", "1")
    return seen

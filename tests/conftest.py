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

import sys
from pathlib import Path

# the simpy reference model lives beside the tests (it is a test oracle, not part of the package)
sys.path.insert(0, str(Path(__file__).parent))

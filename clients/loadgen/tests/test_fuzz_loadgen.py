"""libFuzzer targets for the load generator's parsers (clients/loadgen/fuzz/): the check is scripts/fuzz_testing.py."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from fuzz_testing import check_target  # noqa: E402


@pytest.mark.parametrize("target", ["loadgen_frames", "loadgen_http"])
def test_fuzz_target(target):
    check_target(target)

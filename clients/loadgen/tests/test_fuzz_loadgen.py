"""libFuzzer targets for what the load generator keeps of its own (clients/loadgen/fuzz/: its --url
check against the room's URL parser); the wire protocol's are wsproto/tests/test_fuzz_wsproto.py.
The check is scripts/fuzz_testing.py."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from fuzz_testing import check_target  # noqa: E402


@pytest.mark.parametrize("target", ["loadgen_url"])
def test_fuzz_target(target):
    check_target(target)

"""libFuzzer targets of the wire protocol's room (wsproto/fuzz/): the check is scripts/fuzz_testing.py."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from fuzz_testing import check_target  # noqa: E402


@pytest.mark.parametrize("target", ["wsproto_frames", "wsproto_roundtrip", "wsproto_utf8", "wsproto_url",
                                    "wsproto_handshake", "wsproto_upgrade", "wsproto_close"])
def test_fuzz_target(target):
    check_target(target)

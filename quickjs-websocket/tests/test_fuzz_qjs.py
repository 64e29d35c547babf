"""libFuzzer targets for the QuickJS module's parsers (quickjs-websocket/fuzz/): the check is scripts/fuzz_testing.py."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from fuzz_testing import check_target  # noqa: E402


@pytest.mark.parametrize("target", ["qjs_frames", "qjs_roundtrip", "qjs_utf8", "qjs_url", "qjs_handshake", "qjs_close"])
def test_fuzz_target(target):
    check_target(target)

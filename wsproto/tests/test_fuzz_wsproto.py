"""libFuzzer targets of the wire protocol's room (wsproto/fuzz/): the check is testkit/fuzz_check.py."""

import pytest

from testkit.fuzz_check import check_target


@pytest.mark.parametrize("target", ["wsproto_frames", "wsproto_roundtrip", "wsproto_utf8", "wsproto_url",
                                    "wsproto_handshake", "wsproto_upgrade", "wsproto_close", "wsproto_deflate"])
def test_fuzz_target(target):
    check_target(target)

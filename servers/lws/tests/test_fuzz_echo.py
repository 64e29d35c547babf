"""libFuzzer targets for lws-echo's request-path options (servers/lws/fuzz/): the check is testkit/fuzz_check.py."""

import pytest

from testkit.fuzz_check import check_target


@pytest.mark.parametrize("target", ["echo_reqopts"])
def test_fuzz_target(target):
    check_target(target)

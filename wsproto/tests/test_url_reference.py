"""The room's URL parser (url_core.c) against Node's WHATWG URL, on the committed reference
table (testkit/url_table.py), and the reason it gives for each refusal.  Where it is known
to differ from Node the table says why, and the test checks that it still differs (a fix
must update the table).  The load generator's --url on the same table:
clients/loadgen/tests/test_loadgen_url.py."""
from pathlib import Path

import pytest

from testkit.url_table import answers, build_driver, node_cases, unhex

HERE = Path(__file__).resolve().parent
ROOM = HERE.parent


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    return build_driver(tmp_path_factory.mktemp("url") / "url_table",
                        [HERE / "c" / "url_table.c", ROOM / "url_core.c"])


def results(driver, inputs):
    out = []
    for line in answers(driver, inputs):
        f = line.split()
        out.append({"accept": False, "reason": f[1]} if f[0] == "bad" else
                   {"accept": True, "secure": f[1] == "1", "port": int(f[2]), "host": unhex(f[3]),
                    "path": unhex(f[4])})
    return out


def test_agrees_with_node(driver):
    table = node_cases()
    got = results(driver, [c["input"] for c in table])
    wrong = []
    for case, mod in zip(table, got):
        mod = {k: v for k, v in mod.items() if k != "reason"}
        same = mod == case["node"]
        if case["differs"] and same:
            wrong.append("%r: marked as differing (%s) but agrees now: update the table"
                         % (case["input"], case["differs"]))
        elif not case["differs"] and not same:
            wrong.append("%r: module %s, Node %s" % (case["input"], mod, case["node"]))
    assert not wrong, "\n".join(wrong)


REASONS = [
    ("ftp://h/", "scheme"), ("example.com", "scheme"), ("ws:h/", "scheme"), ("", "scheme"),
    ("ws://h/#", "fragment"), ("ws://h#x", "fragment"), ("ftp://h/#", "scheme"),
    ("ws://user@h/", "userinfo"), ("ws://u:p@h:1/", "userinfo"),
    ("ws://", "no_host"), ("ws:///path", "no_host"), ("ws://:80/", "no_host"), ("ws://?x", "no_host"),
    ("ws://[::1/", "host"), ("ws://[]/", "host"), ("ws://[abc]/", "host"), ("ws://[::1]x/", "host"),
    ("ws://[::g]/", "host"), ("ws://h<x>/", "host"), ("ws://a%41/", "host"), ("ws://h\\path", "host"),
    ("ws://" + "h" * 256 + "/", "host_long"),
    ("ws://h:8a/", "port"), ("ws://h:+80/", "port"), ("ws://h:65536/", "port"), ("ws://h:1:2/", "port"),
    ("ws://h/a b", "path"), ("ws://h/\x01", "path"), ("ws://h?\x7f\x00", "path"),
    ("ws://h/" + "p" * 2046, "path_long"), ("ws://h?" + "q" * 2045, "path_long"),
]


def test_each_refusal_says_why(driver):
    got = results(driver, [s for s, _ in REASONS])
    wrong = ["%r: %s, not %s" % (s, g, want) for (s, want), g in zip(REASONS, got)
             if g != {"accept": False, "reason": want}]
    assert not wrong, "\n".join(wrong)


def test_the_limits_are_the_last_that_fit(driver):
    ok = ["ws://" + "h" * 255 + "/", "ws://h/" + "p" * 2045, "ws://h?" + "q" * 2044, "ws://h:65535/"]
    assert all(r["accept"] for r in results(driver, ok))

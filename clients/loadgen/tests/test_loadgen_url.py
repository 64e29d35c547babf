"""wsbench-loadgen's --url (clients/loadgen/README.md, "--url"): the wire protocol room's URL
parser decides what a URL is (wsproto/tests/test_url_reference.py), loadgen takes an IPv4
address or localhost as its host and says why it refuses a URL in its own words, unchanged;
one test for each case that changed when loadgen gave up its own parser for the room's (the
README lists them); and, on the committed table of Node's WHATWG URL verdicts
(wsproto/fuzz/url/reference.json), what Node takes with such a host loadgen takes with the
same scheme, host, port and path, sending Node's `host` as its Host header, and nothing
Node refuses (the table's stated differences aside)."""

from __future__ import annotations

import ipaddress
import socket
import threading
from pathlib import Path
from typing import Iterator

import pytest
from test_loadgen import LOADGEN, ROOT, SERVER, loadgen, url  # noqa: F401  (url: the lws-echo fixture)

from testkit.raw_ws import read_head
from testkit.url_table import answers, build_driver, node_cases, unhex

HERE = Path(__file__).resolve().parent
built = pytest.mark.skipif(not (LOADGEN.exists() and SERVER.exists()),
                           reason="build/bin/wsbench-loadgen or lws-echo not built (make setup)")

ECHO = ["--type", "text", "--size", "11", "--count", "100"]


def refused(u: str) -> str:
    code, lines, res = loadgen("--url", u, *ECHO)
    assert code == 1 and len(lines) == 1, lines
    return str(res["error"])


@built
@pytest.mark.parametrize("u, why", [
    ("ftp://127.0.0.1/", "--url must start with ws://"),
    ("127.0.0.1:80", "--url must start with ws://"),
    ("ws:///", "bad host in --url"),
    ("ws://" + "h" * 256 + "/", "bad host in --url"),
    ("ws://127.0.0.1:8a/", "bad port in --url"),
    ("ws://127.0.0.1:65536/", "bad port in --url"),
    ("ws://example.com/", "--url host must be an IPv4 address or localhost"),
    ("ws://127.1/", "--url host must be an IPv4 address or localhost"),
    ("ws://127.0.0.1/a b", "bad character in the --url path"),
    ("ws://127.0.0.1/#", "bad character in the --url path"),
    ("ws://127.0.0.1/" + "p" * 2046, "--url path too long"),
])
def test_a_refused_url_is_one_line_in_our_words(u: str, why: str) -> None:
    assert refused(u) == f"{why}: {u}"[:1023]


@built
def test_the_longest_path_that_fits_is_taken() -> None:
    # refused only later, for want of a server (nothing listens on port 1)
    assert refused("ws://127.0.0.1:1/" + "p" * 2045) == "connect: Connection refused (phase connect)"


# --- what changed when loadgen took the room's parser (README, "--url": one line each) ---

def echoes(u: str) -> None:
    code, _, res = loadgen("--url", u, *ECHO)
    assert code == 0 and res["messages"] == 100 and res["errors"] == 0, res


@built
def test_blanks_around_the_url_are_ignored(url: str) -> None:
    echoes(" " + url)     # was: --url must start with ws://
    echoes(url + " \t")   # was: bad character in the --url path
    echoes("\n" + url + "\r\n")


@built
def test_http_is_ws(url: str) -> None:
    echoes("http://" + url[len("ws://"):])   # was: --url must start with ws://
    echoes("HTTP://" + url[len("ws://"):])


@built
def test_https_is_wss() -> None:
    # (a run over TLS: test_loadgen_tls.py)
    assert refused("https://127.0.0.1:1/") == "a wss:// URL needs --ca FILE (the CA to trust)"


@built
def test_port_0_is_taken_and_then_refused_by_the_system() -> None:
    # was: bad port in --url
    assert refused("ws://127.0.0.1:0/") == "connect: Connection refused (phase connect)"


@pytest.fixture
def capture() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server that keeps the first request head it is sent, and closes."""
    srv = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            got.append(read_head(conn.recv, whole=False))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1], got
    finally:
        srv.close()
        t.join(5)


def sent_host(got: list[bytes]) -> str:
    assert got, "no request"
    lines = got[0].decode().split("\r\n")
    return [line[len("Host: "):] for line in lines if line.startswith("Host: ")][0]


@built
def test_the_host_header_is_the_url_written_out(capture: tuple[int, list[bytes]]) -> None:
    # was the URL's text as given: LocalHost:0PORT (lower case, no leading zeros now; the
    # scheme's default port left out: test_loadgen_agrees_with_node, below)
    port, got = capture
    code, _, res = loadgen("--url", f"ws://LocalHost:0{port}/x?y", *ECHO, timeout=30)
    assert code == 1, res
    assert sent_host(got) == f"localhost:{port}"
    assert got[0].startswith(b"GET /x?y HTTP/1.1\r\n")


@built
def test_a_fragment_anywhere_is_a_bad_character() -> None:
    # was: bad port in --url, --url host must be an IPv4 address or localhost
    assert refused("ws://127.0.0.1:80#x") == "bad character in the --url path: ws://127.0.0.1:80#x"
    assert refused("ws://127.0.0.1#") == "bad character in the --url path: ws://127.0.0.1#"


@built
def test_a_user_name_is_not_an_ipv4_host() -> None:
    # with a password it was: bad port in --url
    for u in ("ws://u@127.0.0.1/", "ws://u:p@127.0.0.1:80/"):
        assert refused(u) == f"--url host must be an IPv4 address or localhost: {u}"


@built
def test_an_ipv6_address_is_not_an_ipv4_host() -> None:
    # was: bad port in --url
    for u in ("ws://[::1]/", "ws://[::1]:80/", "ws://[::1/"):
        assert refused(u) == f"--url host must be an IPv4 address or localhost: {u}"


@built
def test_a_port_without_a_host_is_a_bad_host() -> None:
    # was: --url host must be an IPv4 address or localhost
    assert refused("ws://:80/") == "bad host in --url: ws://:80/"


@built
def test_of_a_bad_host_and_a_bad_path_the_path_is_named() -> None:
    # was: --url host must be an IPv4 address or localhost
    assert refused("ws://example.com/a b") == "bad character in the --url path: ws://example.com/a b"
    u = "ws://example.com/" + "p" * 2046
    assert refused(u) == f"--url path too long: {u}"[:1023]


# --- on Node's verdicts (the driver: c/url_check.c, built here)

@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    lg = ROOT / "clients" / "loadgen"
    return build_driver(tmp_path_factory.mktemp("url") / "url_check",
                        [HERE / "c" / "url_check.c", ROOT / "wsproto" / "url_core.c",
                         ROOT / "wsproto" / "handshake_core.c", lg / "http.c", lg / "util.c"], ("-lcrypto",))


def results(driver, inputs):
    out = []
    for line in answers(driver, inputs):
        if line.startswith("bad "):
            out.append({"accept": False, "why": line[len("bad "):]})
            continue
        f = line.split()
        out.append({"accept": True, "secure": f[1] == "1", "port": int(f[2]), "host": unhex(f[3]),
                    "path": unhex(f[4]), "host_header": unhex(f[5])})
    return out


def reachable(node):
    """an IPv4 address or localhost: what loadgen connects to"""
    if node["host"] == "localhost":
        return True
    try:
        return isinstance(ipaddress.ip_address(node["host"]), ipaddress.IPv4Address)
    except ValueError:
        return False


def node_host(node):
    """Node's URL.host: the host, and the port where it is not the scheme's default"""
    default = 443 if node["secure"] else 80
    return node["host"] + ("" if node["port"] == default else ":%d" % node["port"])


def test_loadgen_agrees_with_node(driver):
    table = node_cases()
    got = results(driver, [c["input"] for c in table])
    wrong = []
    for case, lg in zip(table, got):
        node = case["node"]
        if case["differs"]:
            continue  # the room's stated differences are loadgen's too
        if lg["accept"]:
            want = dict(node, host_header=node_host(node)) if node["accept"] else node
            if not node["accept"] or not reachable(node) or lg != want:
                wrong.append("%r: loadgen %s, Node %s" % (case["input"], lg, node))
        elif node["accept"] and reachable(node):
            wrong.append("%r: loadgen rejects (%s), Node %s" % (case["input"], lg["why"], node))
    assert not wrong, "\n".join(wrong)

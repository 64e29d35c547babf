"""utf8_stream() (incremental UTF-8 validation) against Python's strict decoder: valid
and invalid text split into chunks at every kind of position must fail in exactly the
chunk after which no continuation could make it valid, and only there."""
import random
import shutil
import subprocess

import pytest

from qjs_runs import ARM_ROOT, HERE, ROOT, TARGET_RUN

# make test-arm: the same programs cross-built against the armhf QuickJS, run under qemu-arm
PREFIX = ROOT / "build" / ("arm/prefix" if ARM_ROOT else "prefix")
CC = "arm-linux-gnueabihf-gcc" if ARM_ROOT else "cc"


def build(tmp_path_factory, name):
    """tests/c/NAME.c compiled against src/utf8.c, wsproto/utf8_core.c and QuickJS"""
    cc = shutil.which(CC)
    if cc is None or not (PREFIX / "lib" / "libquickjs.a").exists():
        pytest.skip("%s or %s missing" % (CC, (PREFIX / "lib" / "libquickjs.a").relative_to(ROOT)))
    exe = tmp_path_factory.mktemp("utf8") / name
    subprocess.run([cc, "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
                    "-I", str(ROOT / "wsproto"), "-isystem", str(PREFIX / "include"), "-isystem", str(PREFIX / "include" / "quickjs"),
                    "-o", str(exe), str(HERE / "c" / f"{name}.c"),
                    str(HERE.parent / "src" / "utf8.c"), str(ROOT / "wsproto" / "utf8_core.c"),
                    str(PREFIX / "lib" / "libquickjs.a"),
                    "-lm", "-ldl", "-lpthread"], check=True)
    return exe


@pytest.fixture(scope="module")
def stream_test(tmp_path_factory):
    return build(tmp_path_factory, "utf8_stream_test")


@pytest.fixture(scope="module")
def text_stream_test(tmp_path_factory):
    return build(tmp_path_factory, "text_stream_test")


@pytest.fixture(scope="module")
def text_string_test(tmp_path_factory):
    return build(tmp_path_factory, "text_string_test")


def viable(prefix):
    """prefix is valid UTF-8, or valid up to a sequence that later bytes can complete"""
    try:
        prefix.decode("utf-8")
        return True
    except UnicodeDecodeError as e:
        return e.reason == "unexpected end of data" and e.end == len(prefix)


def expected(chunks):
    """the first chunk after which the message can no longer be valid (fail fast:
    earlier than Python's incremental decoder, which waits for a sequence's last
    byte), "end" if only the message end leaves a sequence open, or "ok"."""
    data = b""
    for i, ch in enumerate(chunks):
        data += ch
        if not viable(data):
            return str(i)
    try:
        data.decode("utf-8")
        return "ok"
    except UnicodeDecodeError:
        return "end"


def run(exe, cases):
    text = "".join(" ".join(c.hex() or "-" for c in chunks) + "\n" for chunks in cases)
    out = subprocess.run([*TARGET_RUN, str(exe)], input=text, capture_output=True, text=True, check=True).stdout
    return out.split()


def splits(data, rng):
    """data cut at random positions (empty chunks included)"""
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randrange(0, 6)))
    out, prev = [], 0
    for c in cuts + [len(data)]:
        out.append(data[prev:c])
        prev = c
    return out


SAMPLES = ["a", "é", "ß", "€", "中", "😀", "𝄞", "\U0010ffff", "\ud7ff", "\ue000", "\u0800", "\u07ff", "\U00010000"]
BAD = [b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80",
       b"\xed\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
       b"\xff", b"\xfe", b"\xc2\x41", b"\xe2\x82\x41", b"\xf0\x9f\x98\x41", b"\xc2", b"\xe2\x82", b"\xf0\x9f\x98"]


def test_every_split_of_short_sequences(stream_test):
    """every sample and every bad sequence, alone and between ASCII, cut at every position"""
    cases = []
    for s in [x.encode("utf-8", "surrogatepass") for x in SAMPLES] + BAD:
        for body in (s, b"ab" + s + b"cd", s + s):
            for i in range(len(body) + 1):
                for j in range(i, len(body) + 1):
                    cases.append([body[:i], body[i:j], body[j:]])
    assert run(stream_test, cases) == [expected(c) for c in cases]


def test_random_text_random_chunks(stream_test):
    rng = random.Random(9)
    cases = []
    for _ in range(20000):
        parts = [rng.choice(SAMPLES) * rng.randrange(1, 4) for _ in range(rng.randrange(1, 12))]
        data = bytearray("".join(parts).encode("utf-8", "surrogatepass"))
        if rng.random() < 0.5:  # corrupt: a bad sequence inserted, or one byte changed
            if rng.random() < 0.5:
                pos = rng.randrange(len(data) + 1)
                data[pos:pos] = rng.choice(BAD)
            else:
                data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:  # long ASCII runs exercise the 8-bytes-at-a-time path
            data[0:0] = b"x" * rng.randrange(1, 40)
        cases.append(splits(bytes(data), rng))
    got = run(stream_test, cases)
    want = [expected(c) for c in cases]
    bad = [(c, g, w) for c, g, w in zip(cases, got, want) if g != w]
    assert not bad, bad[:5]


def long_texts(rng):
    """valid texts around and far above the fast path's 1 KiB threshold: ASCII runs of
    every length against the 8-byte steps, 2-, 3- and 4-byte characters (surrogate pairs
    in UTF-16), pure ASCII, and a short text after long ones (the scratch is released)"""
    out = []
    for size in (1023, 1024, 1025, 4096, 70001, 1 << 20):
        parts, n = [], 0
        while n < size:
            piece = rng.choice(SAMPLES) if rng.random() < 0.5 else "x" * rng.randrange(0, 20)
            parts.append(piece)
            n += len(piece.encode("utf-8", "surrogatepass"))
        out.append("".join(parts).encode("utf-8", "surrogatepass"))
    out.append(b"y" * 5000)
    out.append(("\U0001f600" * 300).encode())
    out.append(("é" * 600 + "z").encode())
    for shift in range(9):
        out.append(b"a" * shift + ("€" * 400).encode() + b"b" * shift)
    return out


def test_received_text_strings_match(text_string_test):
    """strrecv: each long received text becomes the same string as JS_NewStringLen() makes"""
    texts = long_texts(random.Random(11))
    out = subprocess.run([*TARGET_RUN, str(text_string_test)], input="".join(t.hex() + "\n" for t in texts),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "fast 1", "the UTF-16 hand-over is not in use with this QuickJS"
    assert out[1:1 + len(texts)] == ["same"] * len(texts)


def test_received_text_strings_valgrind(text_string_test):
    """the same under memcheck: no invalid reads or writes, nothing lost"""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind missing")
    texts = [t for t in long_texts(random.Random(12)) if len(t) < 100000]
    r = subprocess.run(["valgrind", "--error-exitcode=9", "--leak-check=full", "--errors-for-leak-kinds=definite",
                        str(text_string_test)], input="".join(t.hex() + "\n" for t in texts),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split("\n")[1:1 + len(texts)] == ["same"] * len(texts)


def stream_verdicts(exe, cases):
    text = "".join(" ".join(c.hex() or "-" for c in chunks) + "\n" for chunks in cases)
    out = subprocess.run([*TARGET_RUN, str(exe)], input=text, capture_output=True, text=True, check=True).stdout.split()
    assert out != ["off"], "the UTF-16 hand-over is not in use with this QuickJS"
    return out


def stream_expected(chunks):
    """text_stream() fails where utf8_stream() does, an open sequence at the end in the
    last chunk, and makes the same string as JS_NewStringLen() otherwise"""
    e = expected(chunks)
    return "same" if e == "ok" else str(len(chunks) - 1) if e == "end" else e


def test_streamed_text_validated_and_decoded_in_one_pass(text_stream_test):
    """strrecv's one-pass validation and decoding, chunk by chunk: short sequences cut at
    every position, random texts (valid and corrupted) in random chunks, and long texts"""
    rng = random.Random(13)
    cases = []
    for s in [x.encode("utf-8", "surrogatepass") for x in SAMPLES] + BAD:
        for body in (s, b"ab" + s + b"cd", b"x" * 20 + s + b"y" * 17):
            for i in range(len(body) + 1):
                for j in range(i, len(body) + 1):
                    cases.append([body[:i], body[i:j], body[j:]])
    for _ in range(5000):
        parts = [rng.choice(SAMPLES) * rng.randrange(1, 4) for _ in range(rng.randrange(1, 12))]
        data = bytearray(("a" * rng.randrange(0, 40)).join(parts).encode("utf-8", "surrogatepass"))
        if rng.random() < 0.5:
            data[rng.randrange(len(data))] = rng.randrange(256)
        cases.append(splits(bytes(data), rng))
    for text in long_texts(rng):
        cases.append(splits(text, rng))
        cases.append([text[i:i + 4093] for i in range(0, len(text), 4093)])
    got = stream_verdicts(text_stream_test, cases)
    want = [stream_expected(c) for c in cases]
    bad = [(c[:3], g, w) for c, g, w in zip(cases, got, want) if g != w]
    assert not bad, bad[:5]


def test_streamed_text_valgrind(text_stream_test):
    """the one-pass decoder under memcheck: valid and invalid texts in random chunks"""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind missing")
    rng = random.Random(14)
    cases = [splits(t, rng) for t in long_texts(rng) if len(t) < 100000]
    for _ in range(200):
        data = bytearray("".join(rng.choice(SAMPLES) + "a" * rng.randrange(0, 30) for _ in range(60)).encode())
        if rng.random() < 0.5:
            data[rng.randrange(len(data))] = rng.randrange(256)
        cases.append(splits(bytes(data), rng))
    text = "".join(" ".join(c.hex() or "-" for c in chunks) + "\n" for chunks in cases)
    r = subprocess.run(["valgrind", "--error-exitcode=9", "--leak-check=full", "--errors-for-leak-kinds=definite",
                        str(text_stream_test)], input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == [stream_expected(c) for c in cases]

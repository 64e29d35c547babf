#!/usr/bin/env python3
"""Build and run wsbench's libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined).

    scripts/fuzz.py build                       build every target into build/fuzz/bin/
    scripts/fuzz.py run   [--seconds N] [--targets a,b]
        N seconds per target (default 300), growing corpora in build/fuzz/corpus/<target>/
        (seeded from the committed corpus and regression inputs), crashes in
        build/fuzz/crashes/<target>/; one summary line per target
    scripts/fuzz.py check [--seconds N] [--targets a,b]
        (make test) every target over its committed corpus and regression inputs, then a
        fresh run of N seconds (default 10) from the committed corpus in a temporary folder
    scripts/fuzz.py list

Targets live beside the code they test, in <dir>/fuzz/fuzz_<name>.c, with their seeds in
<dir>/fuzz/corpus/<name>/ and every crash ever found, minimised, in <dir>/fuzz/regress/<name>/:
the wire protocol's pure code once, in wsproto/fuzz/ (both native clients use it); what is a
client's or a server's own, in its folder.
Exit status: 0 when every target ran without a crash, leak or UB report, 1 otherwise.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "fuzz"
CLANG = "clang"
CFLAGS = ["-g", "-O1", "-std=gnu11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "wsproto"), "-I", str(ROOT / "scripts"),
          "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all"]
ROOM, ECHO = "wsproto", "servers/lws"


@dataclass
class Target:
    name: str
    home: str               # the folder whose fuzz/ holds it
    short: str              # fuzz/fuzz_<short>.c, corpus/<short>, regress/<short>
    sources: list
    libs: list = field(default_factory=list)

    @property
    def main(self) -> Path:
        return ROOT / self.home / "fuzz" / ("fuzz_%s.c" % self.short)

    @property
    def seeds(self) -> Path:
        return ROOT / self.home / "fuzz" / "corpus" / self.short

    @property
    def regress(self) -> Path:
        return ROOT / self.home / "fuzz" / "regress" / self.short

    @property
    def binary(self) -> Path:
        return BUILD / "bin" / self.name


TARGETS = [
    Target("wsproto_frames", ROOM, "frames", [ROOM + "/utf8_core.c"]),
    Target("wsproto_roundtrip", ROOM, "roundtrip", []),
    Target("wsproto_utf8", ROOM, "utf8", [ROOM + "/utf8_core.c"]),
    Target("wsproto_url", ROOM, "url", [ROOM + "/url_core.c"]),
    Target("wsproto_handshake", ROOM, "handshake", [ROOM + "/handshake_core.c"], ["-lcrypto"]),
    Target("wsproto_upgrade", ROOM, "upgrade", [ROOM + "/handshake_core.c"], ["-lcrypto"]),
    Target("wsproto_close", ROOM, "close", [ROOM + "/wsclose.c", ROOM + "/utf8_core.c"]),
    Target("wsproto_deflate", ROOM, "deflate", [ROOM + "/deflate_core.c"], ["-lz"]),
    Target("echo_reqopts", ECHO, "reqopts", [ECHO + "/reqopts.c"]),
]


def die(msg: str) -> None:
    print("fuzz: %s" % msg, file=sys.stderr)
    sys.exit(1)


def pick(names: str) -> list:
    if not names:
        return TARGETS
    by = {t.name: t for t in TARGETS}
    out = []
    for n in names.split(","):
        if n not in by:
            die("unknown target %r (targets: %s)" % (n, ", ".join(by)))
        out.append(by[n])
    return out


def build(targets: list) -> None:
    if not shutil.which(CLANG):
        die("clang not found (make setup installs clang and libclang-rt-14-dev)")
    (BUILD / "bin").mkdir(parents=True, exist_ok=True)
    for t in targets:
        inputs = [t.main] + [ROOT / s for s in t.sources]
        headers = [p for d in {i.parent for i in inputs} | {ROOT / "scripts", ROOT / ROOM, ROOT / ROOM / "fuzz"}
                   for p in d.glob("*.h")]
        if t.binary.exists() and all(p.stat().st_mtime < t.binary.stat().st_mtime
                                     for p in inputs + headers):
            continue
        cmd = [CLANG] + CFLAGS + ["-o", str(t.binary)] + [str(i) for i in inputs] + t.libs
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            die("building %s failed:\n%s" % (t.name, r.stderr[-4000:]))


@dataclass
class Result:
    name: str
    executions: int = 0
    cov: int = 0
    ft: int = 0
    corpus: int = 0
    corpus_bytes: int = 0
    crashes: int = 0
    seconds: float = 0.0
    report: str = ""

    def line(self) -> str:
        return ("fuzz %-15s executions=%-10d cov=%-5d ft=%-6d corpus=%d (%d bytes) crashes=%d "
                "seconds=%.0f" % (self.name, self.executions, self.cov, self.ft, self.corpus,
                                  self.corpus_bytes, self.crashes, self.seconds))


def libfuzzer(t: Target, args: list, timeout: float) -> tuple:
    """Run the target in its own process group; (exit code, stderr)."""
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    proc = subprocess.Popen([str(t.binary)] + args, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, errors="replace",
                            start_new_session=True, env=env)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return -9, err + "\nfuzz: killed after %.0f s" % timeout
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return proc.returncode, err


def parse(res: Result, err: str) -> None:
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", err)
    if m:
        res.executions += int(m.group(1))
    last = [l for l in err.splitlines() if re.match(r"#\d+\s+(DONE|INITED|pulse|NEW|REDUCE)", l)]
    if last:
        cm = re.search(r"cov: (\d+) ft: (\d+) corp: (\d+)/(\d+)(\w*)b", last[-1])
        if cm:
            res.cov, res.ft, res.corpus = int(cm.group(1)), int(cm.group(2)), int(cm.group(3))
            mult = {"": 1, "K": 1 << 10, "M": 1 << 20}.get(cm.group(5), 1)
            res.corpus_bytes = int(cm.group(4)) * mult


def fuzz(t: Target, seconds: int, corpus: Path, crashes: Path, extra: list) -> Result:
    res = Result(t.name)
    corpus.mkdir(parents=True, exist_ok=True)
    crashes.mkdir(parents=True, exist_ok=True)
    before = set(crashes.iterdir())
    start = time.monotonic()
    code, err = libfuzzer(t, ["-max_total_time=%d" % seconds, "-print_final_stats=1",
                              "-timeout=20", "-rss_limit_mb=2560", "-max_len=8192",
                              "-artifact_prefix=%s/" % crashes, str(corpus)] +
                          [str(d) for d in extra if d.is_dir()], seconds + 120)
    res.seconds = time.monotonic() - start
    parse(res, err)
    new = set(crashes.iterdir()) - before
    res.crashes = len(new) if new else (1 if code else 0)
    if res.crashes:
        res.report = err[-6000:]
    return res


def replay(t: Target) -> Result:
    """Every committed input once (seeds and regressions)."""
    res = Result(t.name)
    dirs = [str(d) for d in (t.seeds, t.regress) if d.is_dir()]
    if not dirs:
        return res
    with tempfile.TemporaryDirectory() as tmp:
        code, err = libfuzzer(t, ["-runs=0", "-print_final_stats=1",
                                  "-artifact_prefix=%s/" % tmp] + dirs, 300)
    parse(res, err)
    if code:
        res.crashes = 1
        res.report = err[-6000:]
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["build", "run", "check", "list"])
    ap.add_argument("--seconds", type=int)
    ap.add_argument("--targets", default="")
    a = ap.parse_args()
    targets = pick(a.targets)
    if a.command == "list":
        for t in targets:
            print(t.name)
        return 0
    build(targets)
    if a.command == "build":
        return 0
    bad = 0
    for t in targets:
        if a.command == "run":
            res = fuzz(t, a.seconds or 300, BUILD / "corpus" / t.name, BUILD / "crashes" / t.name,
                       [t.seeds, t.regress])
            print(res.line(), flush=True)
        else:
            rep = replay(t)
            print("fuzz %-15s committed inputs: %d executed, crashes=%d"
                  % (t.name, rep.executions, rep.crashes), flush=True)
            if rep.crashes:
                print(rep.report, file=sys.stderr)
                bad += 1
                continue
            with tempfile.TemporaryDirectory() as tmp:
                work = Path(tmp) / "corpus"
                if t.seeds.is_dir():
                    shutil.copytree(t.seeds, work)
                res = fuzz(t, a.seconds or 10, work, Path(tmp) / "crashes", [])
                if res.crashes:  # keep the evidence where it survives the temp folder
                    keep = BUILD / "crashes" / t.name
                    keep.mkdir(parents=True, exist_ok=True)
                    for f in (Path(tmp) / "crashes").iterdir():
                        shutil.copy(f, keep / f.name)
            print(res.line(), flush=True)
        if res.crashes:
            print(res.report, file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

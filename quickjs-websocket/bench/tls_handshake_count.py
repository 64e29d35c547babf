"""Instructions per full TLS handshake (connect, TLS handshake, upgrade, close; no session
resumption), counted by callgrind as the deterministic gate counts a cell, with the share
of each object.

    .venv/bin/python quickjs-websocket/bench/tls_handshake_count.py [--client NAME ...]
                     [--qjs LABEL=ROOT ...] [--count N] [--warmup N] [--repeat N] [--work DIR]
                     [--groups LIST] [--json FILE]

NAME (repeatable; default: all four, or none when --qjs is given):
  qjs          the QuickJS client (build/prefix/bin/qjs clients/quickjs.mjs) on the system's
               OpenSSL, as the gate's qjs cells run it
  qjs-openssl  the same client with the module built against build/prefix-openssl
               (make setup-openssl: build/openssl/root/clients/quickjs.mjs)
  loadgen      wsbench-loadgen (C, on the system's OpenSSL), for the library's share
  loadgen-openssl  the same load generator on build/prefix-openssl's libssl.so.3 and
               libcrypto.so.3 (LD_LIBRARY_PATH for its process: OpenSSL 3.x keeps its ABI)
--qjs LABEL=ROOT (repeatable): the QuickJS client of another tree, ROOT/clients/quickjs.mjs,
  whose imports find ROOT/build/quickjs-websocket (e.g. two copies of one commit, its module
  built against each OpenSSL: the working tree may be changing under another session).
Each against build/bin/lws-echo in TLS mode (the system's OpenSSL, the test ECDSA P-256
certificate), the client trusting the test CA: the `handshakes` workload (kind handshake)
over wss://, N connections in the measured phase after the warm-up, counted from the start
barrier to the result line (gate/callgrind.py run_cell: --instr-atstart=no).
--groups LIST: the clients' key-exchange groups (OpenSSL's Groups setting, e.g. X25519),
through an OpenSSL configuration file of their own (OPENSSL_CONF: written into --work, its
system_default section, which libssl applies to every SSL_CTX it makes). Without it the
library's defaults: OpenSSL 3.5 offers X25519MLKEM768 and X25519 key shares, 3.0 X25519.

Printed per run: instructions per handshake; each object's own (self) instructions per
handshake; OpenSSL's inclusive share: what calls from our code (lws.so, qjs, the load
generator, libwebsockets) into libssl/libcrypto cost with everything under them (malloc,
memcpy, our BIO's recv/send wrappers), and, of that, what OpenSSL's calls back into our
code cost (the BIO, the new-session callback). The callgrind files stay in --work.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness"))

from wsbench.certificates import load_certs  # noqa: E402
from wsbench.errors import WsbenchError  # noqa: E402
from wsbench.gate.callgrind import run_cell  # noqa: E402
from wsbench.gate.cells import Cell  # noqa: E402
from wsbench import tomlfile  # noqa: E402
from wsbench.workloads import WorkloadSet, _workload, load_workloads  # noqa: E402

OPENSSL_ROOT = ROOT / "build" / "openssl" / "root"
CLIENTS = ("qjs", "qjs-openssl", "loadgen", "loadgen-openssl")
OPENSSL_LIB = ROOT / "build" / "prefix-openssl" / "lib"
OPENSSL = ("libssl", "libcrypto")
OURS = ("lws.so", "qjs", "wsbench-loadgen", "libwebsockets")


def cell(name: str, count: int, warmup: int, roots: dict[str, Path]) -> Cell:
    counts, warm = (count, count), (warmup, warmup)
    if name in roots:
        root = roots[name].resolve()
        if not (root / "build" / "quickjs-websocket" / "lws.so").exists():
            raise WsbenchError(f"--qjs {name}={roots[name]}: no build/quickjs-websocket/lws.so there")
        return Cell(name, "handshakes", counts, warm, tls=True,
                    command=("build/prefix/bin/qjs", str(root / "clients" / "quickjs.mjs")))
    if name == "qjs":
        return Cell("qjs", "handshakes", counts, warm, tls=True)
    if name == "qjs-openssl":
        client = OPENSSL_ROOT / "clients" / "quickjs.mjs"
        if not (OPENSSL_ROOT / "build" / "quickjs-websocket" / "lws.so").exists():
            raise WsbenchError("build/openssl/root has no module (run: make setup-openssl)")
        return Cell("qjs-openssl", "handshakes", counts, warm, tls=True,
                    command=("build/prefix/bin/qjs", str(client.relative_to(ROOT))))
    if name in ("loadgen", "loadgen-openssl"):
        ca = load_certs().values("server")["{ca}"]
        env: tuple[tuple[str, str], ...] = ()
        if name == "loadgen-openssl":
            if not (OPENSSL_LIB / "libssl.so.3").exists():
                raise WsbenchError("build/prefix-openssl has no libssl.so.3 (run: make setup-openssl)")
            env = (("LD_LIBRARY_PATH", str(OPENSSL_LIB)),)
        return Cell(name, "handshakes", counts, warm, tls=True, env=env,
                    command=("build/bin/wsbench-loadgen", "--ca", ca))
    raise WsbenchError(f"unknown client '{name}' (known: {', '.join(CLIENTS)})")


def short(obj: str) -> str:
    """An object's name without its directory and version (libssl.so.3 -> libssl)."""
    base = obj.rsplit("/", 1)[-1]
    return re.sub(r"\.so(\.[0-9.]+)?$", "", base) if base.startswith("lib") else base


@dataclass
class Shares:
    self_by_object: dict[str, int]
    into_openssl: int  # inclusive cost of calls from our objects into OpenSSL
    back_into_ours: int  # inclusive cost of calls from OpenSSL into our objects


def shares(path: Path) -> Shares:
    """Self cost per object and the calls across the OpenSSL boundary, from a callgrind
    file written with --compress-strings=no (names in full) and --dump-instr=no."""
    self_cost: dict[str, int] = defaultdict(int)
    into = back = 0
    ob = cob = ""
    call_pending = False
    call_from = call_to = ""
    for line in path.read_text(errors="replace").splitlines():
        if not line:
            continue
        c = line[0]
        if c.isdigit() or c in "+-*":
            parts = line.split()
            cost = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
            if call_pending:
                call_pending = False
                ours_from, ours_to = short(call_from) in OURS or call_from.endswith("/lws.so"), \
                    short(call_to) in OURS or call_to.endswith("/lws.so")
                if ours_from and short(call_to) in OPENSSL:
                    into += cost
                elif short(call_from) in OPENSSL and ours_to:
                    back += cost
            else:
                self_cost[short(ob)] += cost
        elif line.startswith("ob="):
            ob = line[3:]
            cob = ""
        elif line.startswith("fn="):
            cob = ""
        elif line.startswith("cob="):
            cob = line[4:]
        elif line.startswith("calls="):
            call_pending = True
            call_from, call_to = ob, cob or ob
            cob = ""
    return Shares(dict(self_cost), into, back)


def handshake_workloads() -> WorkloadSet:
    """The workloads; if another file of workloads/ does not load (work in progress in a
    shared tree), the `handshakes` workload of workloads/scale.toml alone."""
    try:
        return load_workloads()
    except WsbenchError:
        path = ROOT / "workloads" / "scale.toml"
        table = tomlfile.load(path)["workload"]["handshakes"]
        return WorkloadSet({"handshakes": _workload("scale.toml: handshakes", "handshakes", table,
                                                    "workloads/scale.toml")}, {})


def groups_conf(work: Path, groups: str) -> Path:
    """An OpenSSL configuration whose system default sets the key-exchange groups."""
    if not re.fullmatch(r"[A-Za-z0-9_:?*/-]+", groups):
        raise WsbenchError(f"--groups {groups!r}: not a group list (e.g. X25519 or X25519:P-256)")
    work.mkdir(parents=True, exist_ok=True)
    path = work / "groups.cnf"
    path.write_text("openssl_conf = openssl_init\n[openssl_init]\nssl_conf = ssl_sect\n[ssl_sect]\n"
                    "system_default = system_default_sect\n[system_default_sect]\n"
                    f"Groups = {groups}\n")
    return path


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--client", action="append", choices=CLIENTS)
    ap.add_argument("--qjs", action="append", default=[], metavar="LABEL=ROOT")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "openssl" / "counts")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--groups")
    args = ap.parse_args(argv)
    roots = {}
    for spec in args.qjs:
        label, sep, root = spec.partition("=")
        if not sep or not label or label in CLIENTS:
            print(f"tls_handshake_count: --qjs {spec}: want LABEL=ROOT (LABEL not one of {', '.join(CLIENTS)})",
                  file=sys.stderr)
            return 2
        roots[label] = Path(root)
    workloads = handshake_workloads()
    out = []
    try:
        for name in (args.client or ([] if roots else list(CLIENTS))) + list(roots):
            for rep in range(args.repeat):
                c = cell(name, args.count, args.warmup, roots)
                if args.groups:
                    c = replace(c, env=(*c.env, ("OPENSSL_CONF", str(groups_conf(args.work, args.groups)))))
                work = args.work / f"{name}-{rep}"
                count = run_cell(c, workloads, "full", work)
                files = sorted(work.glob("*.callgrind"))
                s = shares(files[0]) if files else Shares({}, 0, 0)
                n = count.messages
                per = {k: round(v / n) for k, v in sorted(s.self_by_object.items(), key=lambda kv: -kv[1])}
                row = {"client": name, "groups": args.groups or "default", "repeat": rep, "handshakes": n, "per_handshake": round(count.per_message, 1),
                       "self_by_object": per, "openssl_inclusive": round(s.into_openssl / n),
                       "openssl_calls_back": round(s.back_into_ours / n)}
                out.append(row)
                print(f"{name} #{rep}: {row['per_handshake']:,.1f} instructions per handshake ({n}); "
                      f"OpenSSL inclusive {row['openssl_inclusive']:,} (calls back into ours "
                      f"{row['openssl_calls_back']:,}); self: "
                      + ", ".join(f"{k} {v:,}" for k, v in per.items() if v >= 100), flush=True)
    except WsbenchError as exc:
        print(f"tls_handshake_count: {exc}", file=sys.stderr)
        return 1
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

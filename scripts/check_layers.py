#!/usr/bin/env python3
"""Check the layers of the QuickJS module (quickjs-websocket/src): each file calls only
files of its own layer or below, the calls between files have no cycle, and each file
includes only the module's headers of its own layer or below.

    scripts/check_layers.py                  compile src/*.c into a temporary folder, check
    scripts/check_layers.py --objects DIR    check already built objects (DIR/<name>.o)
    scripts/check_layers.py --src DIR        another copy of the sources (the tests plant
                                             violations in one)

The calls come from the objects' symbols (`nm`): a file that leaves a symbol undefined
which another file of the module defines calls (or reads) that file.  Static inline
functions in headers leave no symbol, so the `#include`s of the module's own headers are
checked as well, and so are the includes each layer must not have (JS below the binding,
libwebsockets outside its adapter, sockets in pure code).  The layer of every file is
declared once, in LAYERS below; quickjs-websocket/README.md shows the same table (its
"Layers" table must list the same files, which is checked too).

Exit status 0: no problem; 1: problems, one line each (the files, the symbol or header);
2: the check could not run (a compiler error, nm missing).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "quickjs-websocket" / "src"
README = ROOT / "quickjs-websocket" / "README.md"
PREFIX = ROOT / "build" / "prefix"


@dataclass(frozen=True)
class Layer:
    name: str
    what: str
    files: tuple[str, ...]
    forbid: tuple[str, ...] = ()  # system headers (prefixes) no file of the layer includes


# Bottom to top.  A file may call and include files of its own layer and of the layers
# before it; within a layer the calls must not form a cycle.
LAYERS: tuple[Layer, ...] = (
    Layer("pure", "no JS, sockets or libwebsockets: frames, close codes, the handshake's "
          "request and 101 check, URLs, UTF-8, the switches",
          ("wsproto.h", "opts.h", "opts.c", "wsclose.h", "wsclose.c", "handshake_core.h",
           "handshake_core.c", "url_core.h", "url_core.c", "utf8_core.h", "utf8_core.c"),
          ("quickjs", "libwebsockets", "sys/socket.h", "sys/epoll.h", "netdb.h", "poll.h")),
    Layer("loop", "the event loop (fds, epoll batching, deadlines, service depth) and the "
          "send queue; knows nothing of connections",
          ("loop.h", "loop.c", "txq.h", "txq.c"),
          ("quickjs", "libwebsockets")),
    Layer("transport", "one struct tp_ops per connection: raw TCP, TLS (OpenSSL) over it, and libwebsockets "
          "(its adapter, which also frames the lws path: struct framer fr_lws)",
          ("tp.h", "tp_tcp.h", "tp_tcp.c", "tp_tls.h", "tp_tls.c", "tp_lws.h", "tp_lws.c", "pool.h",
           "pool.c"),
          ("quickjs",)),
    Layer("framing", "our framing over any transport (struct framer fr_own) and the HTTP "
          "upgrade over any transport",
          ("frame.h", "frame.c", "upgrade.h", "upgrade.c"),
          ("quickjs", "libwebsockets")),
    Layer("state", "the connection state machine: open, closing, closed, fail, close codes",
          ("sm.h", "sm.c"),
          ("quickjs", "libwebsockets")),
    Layer("binding", "JS: the conn class, the receive path, events and the microtask "
          "checkpoint, bufferedAmount, URL and string helpers; the service entry points "
          "(service.c, the one file that knows every layer)",
          ("conn.h", "jsev.h", "jsev.c", "rx.h", "rx.c", "jsconn.h", "jsconn.c", "service.h",
           "service.c", "url.h", "url.c", "utf8.h", "utf8.c"),
          ("libwebsockets",)),
    Layer("module", "the module's function list and init", ("module.c",), ("libwebsockets",)),
)

CFLAGS = ["-O2", "-std=gnu11", "-fPIC", "-Wall", "-Wextra", "-Werror"]
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


@dataclass
class Graph:
    layer_of: dict[str, int]
    defined: dict[str, str] = field(default_factory=dict)  # symbol -> file (.c)
    calls: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (from, to) -> symbols
    problems: list[str] = field(default_factory=list)


def layer_table() -> dict[str, int]:
    table: dict[str, int] = {}
    for i, layer in enumerate(LAYERS):
        for f in layer.files:
            if f in table:
                raise SystemExit(f"check_layers: {f} is declared in two layers")
            table[f] = i
    return table


def describe(g: Graph, f: str) -> str:
    return f"{f} ({LAYERS[g.layer_of[f]].name})"


def compile_all(src: Path, out: Path, cc: str) -> None:
    flags = CFLAGS + ["-isystem", str(PREFIX / "include"), "-isystem", str(PREFIX / "include" / "quickjs")]

    def one(c: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
        return c, subprocess.run([cc, *flags, "-c", "-o", str(out / (c.stem + ".o")), str(c)],
                                 capture_output=True, text=True)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for c, r in pool.map(one, sorted(src.glob("*.c"))):
            if r.returncode:
                print(f"check_layers: cannot compile {c.name}:\n{r.stderr[-3000:]}", file=sys.stderr)
                sys.exit(2)


def symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(defined global symbols, undefined symbols) of one object file."""
    r = subprocess.run(["nm", "-P", str(obj)], capture_output=True, text=True)
    if r.returncode:
        print(f"check_layers: nm {obj}: {r.stderr.strip()}", file=sys.stderr)
        sys.exit(2)
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, undefined


def check_files(g: Graph, src: Path) -> None:
    present = {p.name for p in src.iterdir() if p.suffix in (".c", ".h")}
    for f in sorted(present - g.layer_of.keys()):
        g.problems.append(f"{f}: no layer declared (scripts/check_layers.py, LAYERS)")
    for f in sorted(g.layer_of.keys() - present):
        g.problems.append(f"{f}: declared in LAYERS but not in {src}")


def check_calls(g: Graph, objdir: Path, src: Path) -> None:
    undefined: dict[str, set[str]] = {}
    for c in sorted(src.glob("*.c")):
        obj = objdir / (c.stem + ".o")
        if not obj.exists():
            g.problems.append(f"{c.name}: no object {obj}")
            continue
        d, u = symbols(obj)
        for s in d:
            if s in g.defined:
                g.problems.append(f"{s}: defined in both {g.defined[s]} and {c.name}")
            g.defined[s] = c.name
        undefined[c.name] = u
    for f, syms in undefined.items():
        for s in sorted(syms):
            to = g.defined.get(s)
            if to and to != f:
                g.calls.setdefault((f, to), []).append(s)
    for (f, to), syms in sorted(g.calls.items()):
        if f in g.layer_of and to in g.layer_of and g.layer_of[to] > g.layer_of[f]:
            g.problems.append(f"upward call: {describe(g, f)} -> {describe(g, to)}: {', '.join(syms)}")


def check_cycles(g: Graph) -> None:
    """Tarjan's strongly connected components over the file graph."""
    nodes = sorted({f for edge in g.calls for f in edge})
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for f, to in g.calls:
        succ[f].append(to)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    sccs: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        work = [(v, iter(sorted(succ[v])))]
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    sccs.append(comp)
            elif nxt not in index:
                index[nxt] = low[nxt] = counter
                counter += 1
                stack.append(nxt)
                on.add(nxt)
                work.append((nxt, iter(sorted(succ[nxt]))))
            elif nxt in on:
                low[node] = min(low[node], index[nxt])

    for n in nodes:
        if n not in index:
            visit(n)
    for comp in sccs:
        if len(comp) < 2:
            continue
        members = set(comp)
        edges = [f"{f} -> {to} ({', '.join(syms)})" for (f, to), syms in sorted(g.calls.items())
                 if f in members and to in members]
        g.problems.append(f"cycle among {', '.join(sorted(comp))}: " + "; ".join(edges))


def check_includes(g: Graph, src: Path) -> None:
    for p in sorted(src.iterdir()):
        if p.suffix not in (".c", ".h") or p.name not in g.layer_of:
            continue
        mine = g.layer_of[p.name]
        for kind, name in INCLUDE.findall(p.read_text(errors="replace")):
            if kind == '"' and name in g.layer_of:
                if g.layer_of[name] > mine:
                    g.problems.append(f"upward include: {describe(g, p.name)} includes {describe(g, name)}")
            elif kind == '"' and (src / name).exists():
                g.problems.append(f"{p.name} includes {name}, which has no layer")
            for banned in LAYERS[mine].forbid:
                if name.startswith(banned):
                    g.problems.append(f"{describe(g, p.name)} includes <{name}>: not in layer "
                                      f"{LAYERS[mine].name} ({LAYERS[mine].what.split(':')[0]})")


def check_readme(g: Graph, readme: Path) -> None:
    """The README's "Layers" table (| layer | files | may call |) lists the same files per
    layer: the .c files and the headers that have no .c of their own."""
    text = readme.read_text(errors="replace")
    rows = [line for line in text.splitlines() if line.startswith("|")]
    seen: dict[str, set[str]] = {}
    in_table = False
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].lower() == "layer" and len(cells) >= 3 and cells[1].lower() == "files":
            in_table = True
            continue
        if not in_table:
            continue
        if set(cells[0]) <= set("-: "):
            continue
        name = re.sub(r"^\d+\s*", "", cells[0]).strip("* `")
        if name not in {layer.name for layer in LAYERS}:
            break
        seen[name] = set(re.findall(r"`([^`]+\.[ch])`", cells[1]))
    if not seen:
        g.problems.append(f"{readme}: no \"| layer | files | may call |\" table")
        return
    for layer in LAYERS:
        want = {f for f in layer.files
                if f.endswith(".c") or f[:-2] + ".c" not in layer.files}
        got = seen.get(layer.name)
        if got is None:
            g.problems.append(f"{readme.name}: the layers table has no row {layer.name}")
        elif got != want:
            missing, extra = sorted(want - got), sorted(got - want)
            g.problems.append(f"{readme.name}: layer {layer.name} lists "
                              f"{'missing ' + ', '.join(missing) if missing else ''}"
                              f"{'; ' if missing and extra else ''}"
                              f"{'not in LAYERS ' + ', '.join(extra) if extra else ''}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=SRC)
    ap.add_argument("--objects", type=Path, help="built objects (DIR/<name>.o) instead of compiling")
    ap.add_argument("--readme", type=Path, default=README)
    ap.add_argument("--no-readme", action="store_true", help="skip the README table check")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--graph", action="store_true", help="print the calls between files")
    a = ap.parse_args()
    if not shutil.which("nm"):
        print("check_layers: nm not found (binutils)", file=sys.stderr)
        return 2
    g = Graph(layer_of=layer_table())
    check_files(g, a.src)
    with tempfile.TemporaryDirectory(prefix="check_layers.") as tmp:
        objdir = a.objects
        if objdir is None:
            objdir = Path(tmp)
            compile_all(a.src, objdir, a.cc)
        check_calls(g, objdir, a.src)
    check_cycles(g)
    check_includes(g, a.src)
    if not a.no_readme:
        check_readme(g, a.readme)
    if a.graph:
        for (f, to), syms in sorted(g.calls.items()):
            print(f"{f} -> {to}: {', '.join(syms)}")
    for p in g.problems:
        print(p)
    if g.problems:
        return 1
    nfiles = sum(len(layer.files) for layer in LAYERS)
    print(f"check_layers: {nfiles} files in {len(LAYERS)} layers, {len(g.calls)} calls between "
          f"files: no cycle, no upward call or include")
    return 0


if __name__ == "__main__":
    sys.exit(main())

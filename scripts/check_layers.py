#!/usr/bin/env python3
"""Check the layers of the QuickJS module (quickjs-websocket/src, and below it the wire
protocol's room, wsproto/): each file calls only files of its own layer or below, the calls
between files have no cycle, and each file includes only the module's headers of its own
layer or below.  And the rooms keep apart: wsproto/ includes only its own headers (it is
the bottom layer of every program that uses it), and the load generator (clients/loadgen)
includes nothing of quickjs-websocket, only its own headers and the room's.

    scripts/check_layers.py                  compile src/*.c and wsproto/*.c into a
                                             temporary folder, check
    scripts/check_layers.py --objects DIR    check already built objects (DIR/<name>.o,
                                             DIR/wsproto/<name>.o)
    scripts/check_layers.py --src DIR        another copy of the module's sources (the tests
                                             plant violations in one); --room DIR, --loadgen
                                             DIR: the same for the room and the load generator

The calls come from the objects' symbols (`nm`): a file that leaves a symbol undefined
which another file of the module defines calls (or reads) that file.  Static inline
functions in headers leave no symbol, so the `#include`s of the module's own headers are
checked as well, and so are the includes each layer must not have (JS below the binding,
libwebsockets outside its adapter, sockets in pure code).  The layer of every file is
declared once, in LAYERS below (the room's files are the bottom layer, "pure"); quickjs-websocket/README.md shows the same table (its
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
ROOM = ROOT / "wsproto"
LOADGEN = ROOT / "clients" / "loadgen"
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
          "request and 101 check, URLs, UTF-8, permessage-deflate (the wire protocol's room, "
          "wsproto/), the switches",
          ("wsproto.h", "opts.h", "opts.c", "wsclose.h", "wsclose.c", "handshake_core.h",
           "handshake_core.c", "url_core.h", "url_core.c", "utf8_core.h", "utf8_core.c",
           "deflate_core.h", "deflate_core.c"),
          ("quickjs", "libwebsockets", "sys/socket.h", "sys/epoll.h", "netdb.h", "poll.h")),
    Layer("loop", "the event loop (fds, epoll batching, deadlines, service depth) and the "
          "send queue; knows nothing of connections",
          ("loop.h", "loop.c", "txq.h", "txq.c"),
          ("quickjs", "libwebsockets")),
    Layer("transport", "one struct tp_ops per connection: raw TCP, TLS (OpenSSL) over it (with its "
          "socket BIO and the sessions it resumes), and libwebsockets (its adapter, and lws' framing of "
          "the lws path: struct framer fr_lws)",
          ("tp.h", "tp_tcp.h", "tp_tcp.c", "tls_bio.h", "tls_bio.c", "tls_resume.h", "tls_resume.c",
           "tp_tls.h", "tp_tls.c", "fr_lws.h", "fr_lws.c", "tp_lws.h", "tp_lws.c", "pool.h", "pool.c"),
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


def sources(dirs: list[Path], suffixes: tuple[str, ...] = (".c",)) -> list[Path]:
    return sorted((p for d in dirs for p in d.iterdir() if p.suffix in suffixes), key=lambda p: p.name)


def compile_all(dirs: list[Path], out: Path, cc: str) -> None:
    flags = CFLAGS + [f"-I{d}" for d in dirs] + \
        ["-isystem", str(PREFIX / "include"), "-isystem", str(PREFIX / "include" / "quickjs")]

    def one(c: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
        return c, subprocess.run([cc, *flags, "-c", "-o", str(out / (c.stem + ".o")), str(c)],
                                 capture_output=True, text=True)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for c, r in pool.map(one, sources(dirs)):
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


def check_files(g: Graph, dirs: list[Path]) -> None:
    present = [p.name for p in sources(dirs, (".c", ".h"))]
    for f in sorted({f for f in present if present.count(f) > 1}):
        g.problems.append(f"{f}: in both {dirs[0]} and {dirs[1]}")
    for f in sorted(set(present) - g.layer_of.keys()):
        g.problems.append(f"{f}: no layer declared (scripts/check_layers.py, LAYERS)")
    for f in sorted(g.layer_of.keys() - set(present)):
        g.problems.append(f"{f}: declared in LAYERS but not in {' or '.join(map(str, dirs))}")
    for p in sources(dirs[1:], (".c", ".h")):
        if p.name in g.layer_of and g.layer_of[p.name] != 0:
            g.problems.append(f"{p.name}: in {p.parent}, the room of the bottom layer, but declared in "
                              f"layer {LAYERS[g.layer_of[p.name]].name}")


def check_calls(g: Graph, objdir: Path, dirs: list[Path]) -> None:
    undefined: dict[str, set[str]] = {}
    for c in sources(dirs):
        obj = objdir / (c.stem + ".o")
        if not obj.exists():  # the Makefiles keep the room's objects in a folder of their own
            obj = objdir / c.parent.name / (c.stem + ".o")
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


def check_includes(g: Graph, dirs: list[Path]) -> None:
    for p in sources(dirs, (".c", ".h")):
        if p.name not in g.layer_of:
            continue
        mine = g.layer_of[p.name]
        for kind, name in INCLUDE.findall(p.read_text(errors="replace")):
            if kind == '"' and name in g.layer_of:
                if g.layer_of[name] > mine:
                    g.problems.append(f"upward include: {describe(g, p.name)} includes {describe(g, name)}")
            elif kind == '"' and any((d / name).exists() for d in dirs):
                g.problems.append(f"{p.name} includes {name}, which has no layer")
            for banned in LAYERS[mine].forbid:
                if name.startswith(banned):
                    g.problems.append(f"{describe(g, p.name)} includes <{name}>: not in layer "
                                      f"{LAYERS[mine].name} ({LAYERS[mine].what.split(':')[0]})")


def check_rooms(g: Graph, room: Path, loadgen: Path) -> None:
    """The room includes only its own headers; the load generator its own and the room's,
    nothing of the module (by path or by a name only the module has)."""
    mine = {p.name for p in room.iterdir() if p.suffix == ".h"}
    for p in sources([room], (".c", ".h")):
        for kind, name in INCLUDE.findall(p.read_text(errors="replace")):
            if kind == '"' and name not in mine:
                g.problems.append(f"{room.name}/{p.name} includes \"{name}\": the room includes only its own headers")
    if not loadgen.is_dir():
        return
    for p in sorted(loadgen.rglob("*.[ch]")):
        rel = p.relative_to(loadgen)
        for kind, name in INCLUDE.findall(p.read_text(errors="replace")):
            if kind != '"':
                continue
            at = (p.parent / name).resolve()
            if at.exists():
                inside = at.is_relative_to(loadgen.resolve()) or at.is_relative_to(room.resolve())
            else:  # found through the room's include path
                inside = "/" not in name and name in mine
            if "quickjs-websocket" in name or at.is_relative_to(ROOT / "quickjs-websocket"):
                g.problems.append(f"loadgen: {rel} includes \"{name}\": nothing of quickjs-websocket")
            elif not inside:
                g.problems.append(f"loadgen: {rel} includes \"{name}\": neither its own header nor "
                                  f"the room's ({room.name}/)")


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
    ap.add_argument("--room", type=Path, default=ROOM)
    ap.add_argument("--loadgen", type=Path, default=LOADGEN)
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
    dirs = [a.src, a.room]
    check_files(g, dirs)
    with tempfile.TemporaryDirectory(prefix="check_layers.") as tmp:
        objdir = a.objects
        if objdir is None:
            objdir = Path(tmp)
            compile_all(dirs, objdir, a.cc)
        check_calls(g, objdir, dirs)
    check_cycles(g)
    check_includes(g, dirs)
    check_rooms(g, a.room, a.loadgen)
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
          f"files: no cycle, no upward call or include; {a.room.name}/ and loadgen keep to their rooms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The QuickJS client's footprint per architecture (``wsbench footprint``; docs/arm.md,
"Footprint"): what an embedded developer checks first, read from the builds and from the
running client.

- **Files**: ``qjs``, the module (``lws.so``, ``websocket.js``) and libwebsockets' shared
  object, each as built and as a stripped copy (``build/footprint/<arch>/``, stripped by
  the architecture's own ``strip``); a file that is not ELF (websocket.js) has no stripped size.
- **Mapped at start-up**: every file the client's process maps once loaded (for a client
  under qemu-user, its guest's mappings only): the program and each shared object, its
  size and where it comes from (built here, the armhf sysroot's Debian packages, or the
  system's, with the Debian package that installed it).
- **Start-up RSS**: the client loaded and idle before any connection: its catalog
  command with no arguments and ``WSBENCH_HOLD=1`` loads qjs, the module, the adapter's
  checks and the shared workload, reports the missing ``--url`` and waits at its end barrier
  (stdin); VmRSS is read there, and under qemu-user also the guest's own resident pages
  (qemu_guest.py), since the emulator's code, heap and translation cache are in the same
  process.

Memory per held connection comes from the same run's idle cells (the footprint suite).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import procfs, procs, qemu_guest
from .catalog import Catalog, Program
from .hold import hold_for
from .measure import parse_result
from .model import ArchFootprint, FileSize, Footprint, MappedFile
from .paths import ROOT, relative

RUNS = 3  # start-up readings per architecture
SETTLE_S = 0.3  # after the client's line, before reading its memory
TIMEOUT_S = 60.0
WHAT = ("Files: as built, and a copy stripped by the architecture's strip. Start-up: the client's catalog command "
        "with no arguments and WSBENCH_HOLD=1 (qjs, the module, the adapter's checks and the shared workload loaded; "
        "it reports the missing --url and waits at its end barrier, before any connection), VmRSS read there, "
        "{runs} runs; under qemu-user also the resident pages of the guest's own address space (the emulator's "
        "code, heap and translation cache excluded). Mapped: the files the process (its guest) maps then.")


@dataclass(frozen=True)
class ArchSpec:
    """Where one architecture's client and its files are."""

    client: str  # catalog name
    strip: str  # the binutils strip for the architecture
    files: tuple[tuple[str, str], ...]  # (role, path from the repository root)
    sysroot: str | None = None  # the target's libraries (qemu-arm -L)
    debs: str | None = None  # the Debian packages unpacked into the sysroot


ARCHES: dict[str, ArchSpec] = {
    "x86-64": ArchSpec("quickjs", "strip", (
        ("qjs", "build/prefix/bin/qjs"),
        ("lws.so", "build/quickjs-websocket/lws.so"),
        ("websocket.js", "build/quickjs-websocket/websocket.js"),
        ("libwebsockets.so", "build/prefix/lib/libwebsockets.so"))),
    "armhf": ArchSpec("quickjs-armhf", "arm-linux-gnueabihf-strip", (
        ("qjs", "build/arm/prefix/bin/qjs"),
        ("lws.so", "build/arm/root/build/quickjs-websocket/lws.so"),
        ("websocket.js", "build/arm/root/build/quickjs-websocket/websocket.js"),
        ("libwebsockets.so", "build/arm/prefix/lib/libwebsockets.so")), sysroot="build/arm/sysroot",
        debs="build/arm/debs"),
}


def measure_all(catalog: Catalog, arches: list[str], out_dir: Path, runs: int = RUNS) -> Footprint:
    return Footprint(WHAT.format(runs=runs), {a: measure(catalog, a, out_dir / a, runs) for a in arches})


def measure(catalog: Catalog, arch: str, out_dir: Path, runs: int = RUNS) -> ArchFootprint:
    spec = ARCHES[arch]
    client = catalog.clients.get(spec.client)
    if client is None:
        return ArchFootprint(spec.client, error=f"no client '{spec.client}' in the catalog")
    entry = ArchFootprint(client.name, list(client.command))
    why = client.unbuilt() or (f"is not built ({client.missing()[0]} is missing; run: {client.setup})"
                               if client.missing() else None)
    missing = [path for _, path in spec.files if not (ROOT / path).exists()]
    if why or missing:
        entry.error = f"client {client.name} {why}" if why else f"{missing[0]} is missing; run: {client.setup}"
        return entry
    if shutil.which(spec.strip) is None:
        entry.error = f"{spec.strip} is not installed"
        return entry
    entry.strip = _version(spec.strip)
    out_dir.mkdir(parents=True, exist_ok=True)
    entry.files = [_size(role, path, spec.strip, out_dir) for role, path in spec.files]
    for _ in range(runs):
        reading = startup(client)
        if isinstance(reading, str):
            entry.error = reading
            return entry
        rss, guest, files = reading
        entry.startup_rss_kib.append(rss)
        if guest is not None:
            entry.startup_guest_rss_kib = (entry.startup_guest_rss_kib or []) + [guest]
        if not entry.mapped:
            entry.mapped = [_mapped(path, spec) for path in files]
    return entry


def _version(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return tool
    return f"{tool}: {out.splitlines()[0]}" if out else tool


def elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def _size(role: str, path: str, strip: str, out_dir: Path) -> FileSize:
    src = (ROOT / path).resolve()
    size = src.stat().st_size
    if not elf(src):
        return FileSize(role, path, size, None)
    out_dir.mkdir(parents=True, exist_ok=True)
    copy = out_dir / src.name
    done = subprocess.run([strip, "-o", str(copy), str(src)], capture_output=True, text=True, timeout=60)
    return FileSize(role, path, size, copy.stat().st_size if done.returncode == 0 else None)


def startup(client: Program) -> tuple[int, int | None, list[str]] | str:
    """One start-up reading of ``client``: (VmRSS KiB, the guest's KiB under qemu-user or
    None, the files mapped), or why there is none."""
    barrier = hold_for(client.barrier)
    proc = procs.spawn(client.command, cwd=ROOT, env={**os.environ, **client.env, **barrier.env},
                       stdin_pipe=barrier.stdin)
    barrier.attach(proc)
    reader = procs.LineReader(proc)
    try:
        line = reader.readline(time.monotonic() + TIMEOUT_S)
        if line is None or not line.startswith("{") or "missing --url" not in str(parse_result(line).get("error")):
            return (f"client {client.name}: expected its missing --url report at start-up, got "
                    f"{(line or 'nothing')[:80]!r}")
        time.sleep(SETTLE_S)
        rss = procfs.rss_kib(proc.pid)
        guest = qemu_guest.guest_rss_kib(proc.pid)
        files = qemu_guest.guest_files(proc.pid) if qemu_guest.emulated(proc.pid) else qemu_guest.mapped_files(proc.pid)
        if rss is None or files is None or (qemu_guest.emulated(proc.pid) and guest is None):
            return f"client {client.name}: its memory could not be read (/proc/{proc.pid})"
        return rss, guest, files
    finally:
        reader.close()
        barrier.close()
        procs.terminate(proc)


def _mapped(path: str, spec: ArchSpec) -> MappedFile:
    p = Path(path)
    size = p.stat().st_size if p.exists() else 0
    sysroot = (ROOT / spec.sysroot).resolve() if spec.sysroot else None
    if sysroot is not None and p.resolve().is_relative_to(sysroot):
        return MappedFile(relative(p), size, "sysroot", _sysroot_package(p.resolve().relative_to(sysroot), spec))
    if p.resolve().is_relative_to(ROOT / "build"):
        return MappedFile(relative(p), size, "built here")
    return MappedFile(path, size, "system", _package(path))


def _run(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _package(path: str) -> str | None:
    """The Debian package that installed ``path``, with its version (dpkg -S; a merged /usr
    lists libraries under /lib); None when none says so."""
    candidates = [path, str(Path(path).resolve())]
    candidates += [c.replace("/usr/lib/", "/lib/", 1) for c in candidates if c.startswith("/usr/lib/")]
    for candidate in dict.fromkeys(candidates):
        out = _run(["dpkg", "-S", candidate])
        if out and ":" in out:
            name = out.split(":")[0].strip()
            version = _run(["dpkg-query", "-W", "-f=${Version}", name])
            return f"{name} {version}" if version else name
    return None


_DEB_CONTENTS: dict[Path, list[str]] = {}


def _sysroot_package(inside: Path, spec: ArchSpec) -> str | None:
    """The .deb (build/arm/debs, what setup-arm.sh unpacked into the sysroot) that holds
    ``inside`` (a path in the sysroot), as "name version"."""
    if spec.debs is None:
        return None
    for deb in sorted((ROOT / spec.debs).glob("*.deb")):
        if deb not in _DEB_CONTENTS:
            listing = _run(["dpkg-deb", "-c", str(deb)]) or ""
            _DEB_CONTENTS[deb] = [line.split()[5].lstrip(".") for line in listing.splitlines() if len(line.split()) > 5]
        if f"/{inside}" in _DEB_CONTENTS[deb]:
            name, version = deb.name.split("_")[:2]
            return f"{name} {version.replace('%3a', ':')}"
    return None

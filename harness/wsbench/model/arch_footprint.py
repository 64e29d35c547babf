"""The ``footprint`` section (``wsbench footprint``, schema 16): per architecture, the
QuickJS client's files and their stripped sizes, the shared objects its process maps, and
its resident memory at start-up (for a client under qemu-user, also the guest's own
share). Memory per held connection is in the same run's cells (the footprint suite)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FileSize:
    """One file of the client: its size, and a stripped copy's (None: not an ELF object)."""

    role: str  # what it is: qjs, lws.so, websocket.js, libwebsockets.so
    path: str
    bytes: int
    stripped_bytes: int | None

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "path": self.path, "bytes": self.bytes, "stripped_bytes": self.stripped_bytes}

    @staticmethod
    def from_json(d: dict[str, Any]) -> FileSize:
        return FileSize(d["role"], d["path"], d["bytes"], d.get("stripped_bytes"))


@dataclass(frozen=True)
class MappedFile:
    """A file the client's process (its guest, under qemu-user) maps at start-up: the
    program and every shared object it loaded, and where each comes from."""

    path: str
    bytes: int
    origin: str  # "built here" (under build/), "sysroot" (build/arm/sysroot: Debian's armhf packages), "system"
    package: str | None = None  # the Debian package that installed a system file (dpkg -S)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "bytes": self.bytes, "origin": self.origin, "package": self.package}

    @staticmethod
    def from_json(d: dict[str, Any]) -> MappedFile:
        return MappedFile(d["path"], d["bytes"], d["origin"], d.get("package"))


@dataclass
class ArchFootprint:
    """One architecture's client: what was measured, or why nothing was (``error``)."""

    client: str  # its catalog name (quickjs, quickjs-armhf)
    command: list[str] = field(default_factory=list)
    strip: str | None = None  # the strip tool and its version line
    files: list[FileSize] = field(default_factory=list)
    mapped: list[MappedFile] = field(default_factory=list)
    startup_rss_kib: list[int] = field(default_factory=list)  # VmRSS of each start-up run
    startup_guest_rss_kib: list[int] | None = None  # under qemu-user: the guest's own pages, each run
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"client": self.client, "command": self.command, "strip": self.strip,
                "files": [f.to_json() for f in self.files], "mapped": [m.to_json() for m in self.mapped],
                "startup_rss_kib": self.startup_rss_kib, "startup_guest_rss_kib": self.startup_guest_rss_kib,
                "error": self.error}

    @staticmethod
    def from_json(d: dict[str, Any]) -> ArchFootprint:
        return ArchFootprint(d["client"], d.get("command", []), d.get("strip"),
                             [FileSize.from_json(f) for f in d.get("files", [])],
                             [MappedFile.from_json(m) for m in d.get("mapped", [])],
                             d.get("startup_rss_kib", []), d.get("startup_guest_rss_kib"), d.get("error"))


@dataclass
class Footprint:
    what: str  # what start-up means, and how each figure was read
    arches: dict[str, ArchFootprint] = field(default_factory=dict)  # x86-64, armhf

    def failed(self) -> list[tuple[str, str]]:
        """(arch, error) of every architecture without figures."""
        return [(arch, f.error) for arch, f in self.arches.items() if f.error]

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "arches": {k: v.to_json() for k, v in self.arches.items()}}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Footprint:
        return Footprint(d.get("what", ""), {k: ArchFootprint.from_json(v) for k, v in d.get("arches", {}).items()})

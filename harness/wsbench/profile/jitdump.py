"""Bun's JIT code names: jitdump files turned into a perf map.

With ``BUN_JSC_useJITDump=1 BUN_JSC_jitDumpDirectory=DIR`` Bun (JavaScriptCore) writes
``DIR/jit-<tid>-<pid>.dump`` in the jitdump format of the Linux perf tools
(tools/perf/Documentation/jitdump-specification.txt). ``perf inject --jit`` does not pick
these files up, but perf reads a perf map, ``/tmp/perf-<pid>.map`` with one
``<start hex> <size hex> <name>`` line per code region, when it symbolizes the samples.
Only the code-load records are needed for that: each gives an address, a size and the
function's name (with the JSC tier that compiled it).

File layout (little-endian on x86-64): a header of ``total_size`` bytes starting with the
magic 0x4A695444 ("JiTD"), then records of ``id u32, total_size u32, timestamp u64``
followed by the body; JIT_CODE_LOAD (id 0) has ``pid u32, tid u32, vma u64,
code_addr u64, code_size u64, code_index u64``, a NUL-terminated name and the code.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

MAGIC = 0x4A695444
HEADER = struct.Struct("<IIIIIIQQ")  # magic, version, total_size, elf_mach, pad1, pid, timestamp, flags
RECORD = struct.Struct("<IIQ")  # id, total_size, timestamp
CODE_LOAD = struct.Struct("<IIQQQQ")  # pid, tid, vma, code_addr, code_size, code_index
JIT_CODE_LOAD = 0


class JitdumpError(ValueError):
    """A file that is not a jitdump (the message is one line)."""


@dataclass(frozen=True)
class CodeLoad:
    pid: int
    address: int
    size: int
    name: str


def read(path: Path) -> tuple[int, list[CodeLoad]]:
    """The writing process's pid and every code-load record of one jitdump file. A file
    cut short (the process was killed mid-write) yields the records before the cut."""
    data = path.read_bytes()
    if len(data) < HEADER.size:
        raise JitdumpError(f"{path.name}: {len(data)} bytes, shorter than a jitdump header")
    magic, version, header_size, _mach, _pad, pid, _ts, _flags = HEADER.unpack_from(data)
    if magic != MAGIC:
        if magic == int.from_bytes(MAGIC.to_bytes(4, "little"), "big"):
            raise JitdumpError(f"{path.name}: a big-endian jitdump (not supported)")
        raise JitdumpError(f"{path.name}: not a jitdump (magic {magic:#x})")
    loads: list[CodeLoad] = []
    offset = header_size
    while offset + RECORD.size <= len(data):
        rec_id, size, _ts = RECORD.unpack_from(data, offset)
        if size < RECORD.size or offset + size > len(data):
            break  # truncated
        if rec_id == JIT_CODE_LOAD:
            body = offset + RECORD.size
            rpid, _tid, vma, code_addr, code_size, _index = CODE_LOAD.unpack_from(data, body)
            name_start = body + CODE_LOAD.size
            name_end = data.find(b"\0", name_start, offset + size)
            if name_end < 0:
                break
            name = data[name_start:name_end].decode("utf-8", "replace")
            loads.append(CodeLoad(rpid, code_addr or vma, code_size, name))
        offset += size
    return pid, loads


def perf_map_lines(loads: list[CodeLoad]) -> list[str]:
    """``start size name`` lines; newlines in names would break the format."""
    return [f"{c.address:x} {c.size:x} {' '.join(c.name.split())}" for c in loads if c.size > 0]


def write_perf_map(dump_dir: Path, pid: int, map_dir: Path = Path("/tmp")) -> tuple[Path | None, int]:
    """Every jitdump of process ``pid`` in ``dump_dir`` into ``map_dir/perf-<pid>.map``.
    Returns the map (None when there was no dump) and how many code regions it names."""
    loads: list[CodeLoad] = []
    found = False
    for dump in sorted(dump_dir.glob(f"jit-*-{pid}.dump")) + sorted(dump_dir.glob(f"jit-{pid}.dump")):
        found = True
        _pid, records = read(dump)
        loads += records
    if not found:
        return None, 0
    path = map_dir / f"perf-{pid}.map"
    lines = perf_map_lines(loads)
    path.write_text("".join(line + "\n" for line in lines))
    return path, len(lines)

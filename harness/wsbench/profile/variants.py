"""The programs as they are profiled.

Two things change against a timing run:

1. Native code comes from the profiling build (scripts/setup-profile.sh: frame pointers
   and symbols), so perf's frame-pointer unwinding sees whole C stacks through QuickJS,
   libwebsockets and our own C. ``PROFILE_BUILD`` maps each normal file to its profiling
   twin; a command or requirement naming a normal file names the twin instead.
2. JIT runtimes are told to name their generated code (facts established on this machine
   type, issue 8):
   - Node 20/22: ``--perf-basic-prof --interpreted-frames-native-stack`` writes
     /tmp/perf-PID.map (frames appear as ``JS:*name file:line``);
   - Deno: the same V8 flags through ``--v8-flags=...``;
   - Bun: no perf-map flag; ``BUN_JSC_useJITDump=1`` writes jitdump files into
     ``BUN_JSC_jitDumpDirectory``, which jitdump.py turns into a perf map;
   - QuickJS and native programs: nothing (QuickJS interprets: its JS functions are
     invisible to perf, only the interpreter's C frames show).
   Their own CPU profilers (``--cpu-prof``) are a separate pass with other flags.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..catalog import Program

PROFILE_BUILD = {
    "build/prefix/bin/qjs": "build/profile/prefix/bin/qjs",
    # Run through the profiling tree, the unchanged adapter imports the profiling module
    # (its imports are relative: ../build/quickjs-websocket/websocket.js).
    "clients/quickjs.mjs": "build/profile/root/clients/quickjs.mjs",
    "build/quickjs-websocket/lws.so": "build/profile/root/build/quickjs-websocket/lws.so",
    "build/clients/wsbench_check.so": "build/profile/root/build/clients/wsbench_check.so",
    "build/bin/lws-echo": "build/profile/bin/lws-echo",
    "build/bin/wsbench-loadgen": "build/profile/bin/wsbench-loadgen",
}

# The perf map flags also switch on V8's own log, which it writes into the working directory
# (isolate-*-v8.log) unless told where: into the cell's logs ({v8log}, filled in by for_perf).
V8_PERF_FLAGS = ("--perf-basic-prof", "--interpreted-frames-native-stack", "--no-logfile-per-isolate",
                 "--logfile={v8log}")


@dataclass(frozen=True)
class JitNaming:
    """How a runtime names its JIT code for perf."""

    method: str  # "perf-map" (the runtime writes /tmp/perf-PID.map), "jitdump" (Bun), "none"
    flags: tuple[str, ...] = ()  # runtime flags, inserted after the runtime's own verb
    note: str = ""  # what stays unnamed, for the summary


@dataclass(frozen=True)
class RuntimeFacts:
    flags_at: int  # where runtime flags go in the command (after argv[0], or after `deno run`)
    jit: JitNaming
    cpu_prof: tuple[str, ...] = ()  # flags for the runtime's own CPU profiler ({dir}: output dir)


RUNTIMES: dict[str, RuntimeFacts] = {
    "node20": RuntimeFacts(1, JitNaming("perf-map", V8_PERF_FLAGS), ("--cpu-prof", "--cpu-prof-dir={dir}")),
    "node22": RuntimeFacts(1, JitNaming("perf-map", V8_PERF_FLAGS), ("--cpu-prof", "--cpu-prof-dir={dir}")),
    "deno": RuntimeFacts(2, JitNaming("perf-map", ("--v8-flags=" + ",".join(V8_PERF_FLAGS),), note=(
        "Deno's own native frames (its Rust: tokio, its WebSocket code, V8's C++) stay unnamed: the release "
        "binary is stripped, so they appear as [unknown] in the deno binary")),
        ("--cpu-prof", "--cpu-prof-dir={dir}")),
    "bun": RuntimeFacts(1, JitNaming("jitdump", note=(
        "Bun's own native frames (its event loop, networking, JSC's C++) stay unnamed: the release "
        "binary is stripped of its internal symbols (only its ~1,100 exported ones remain), so they appear as "
        "[unknown] in the bun binary")),
        ("--cpu-prof", "--cpu-prof-dir={dir}")),
    "quickjs": RuntimeFacts(1, JitNaming("none", note=(
        "QuickJS interprets: its JS functions are invisible to perf; their cost shows as the "
        "interpreter's C frames (JS_CallInternal and the functions it calls)"))),
    "native": RuntimeFacts(1, JitNaming("none")),
}


@dataclass(frozen=True)
class Variant:
    """A program's command line and environment for one profiling pass."""

    program: Program
    jit: JitNaming
    env_extra: dict[str, str] = field(default_factory=dict)

    @property
    def runtime(self) -> str:
        return self.program.runtime


def facts(program: Program) -> RuntimeFacts:
    return RUNTIMES.get(program.runtime, RuntimeFacts(1, JitNaming("none")))


def profiling_build(program: Program) -> Program:
    """``program`` with every file of the normal native build swapped for its twin."""
    swap = lambda items: tuple(PROFILE_BUILD.get(x, x) for x in items)  # noqa: E731
    return replace(program, command=swap(program.command), requires=swap(program.requires))


def _insert(program: Program, at: int, flags: tuple[str, ...]) -> Program:
    cmd = list(program.command)
    return replace(program, command=tuple(cmd[:at] + list(flags) + cmd[at:]))


def for_perf(program: Program, jitdump_dir: Path, v8_log: Path | None = None) -> Variant:
    """The program as perf records it: profiling build, JIT code named (V8's own log into
    ``v8_log``, by default beside the jitdumps)."""
    f = facts(program)
    v8log = str(v8_log or jitdump_dir / "v8.log")
    built = profiling_build(program)
    if f.jit.method == "jitdump":
        env = {"BUN_JSC_useJITDump": "1", "BUN_JSC_jitDumpDirectory": str(jitdump_dir)}
        return Variant(replace(built, env={**built.env, **env}), f.jit)
    return Variant(_insert(built, f.flags_at, tuple(x.replace("{v8log}", v8log) for x in f.jit.flags)), f.jit)


def for_cpu_prof(program: Program, out_dir: Path) -> Program | None:
    """The program with its runtime's own CPU profiler on (None: it has none)."""
    f = facts(program)
    if not f.cpu_prof:
        return None
    return _insert(program, f.flags_at, tuple(x.replace("{dir}", str(out_dir)) for x in f.cpu_prof))

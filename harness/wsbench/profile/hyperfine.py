"""Start-up cost through hyperfine (``wsbench startup``).

- A client's whole process: start the runtime, connect to the native echo server (lws),
  echo one 11-byte text message, close, exit — the workload's own ``echo`` kind with
  ``--count 1 --warmup 0`` (without the start barrier). hyperfine runs the command
  without a shell (``-N``), ``--warmup`` times first, then ``--runs`` times, and its
  ``--export-json`` gives the figures. One more run, outside hyperfine and held after its
  result (``WSBENCH_HOLD=1``), reads the process's peak RSS (VmHWM): start-up memory.
- A server's path from exec to its readiness line: hyperfine runs (through bash, whose
  own start-up hyperfine measures and subtracts) a coprocess of the server, reads its
  first line, checks it is ``WSBENCH-READY``, and kills the server (SIGKILL, not timed:
  shutdown is not start-up).

Each hyperfine run is one process group (procs.run), killed on a timeout or Ctrl-C.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path

from .. import procfs, procs
from ..hold import hold_for
from ..measure import START_LINE, parse_result
from ..catalog import Program
from ..errors import WsbenchError
from ..paths import ROOT
from ..model import Figures, StartupTime
from ..server import RunningServer

DEFAULT_WARMUP = 3
DEFAULT_RUNS = 20
TIMEOUT_S = 600.0
WHAT = ("Clients: the whole process — start the runtime, connect to the native echo server (lws), echo one "
        "11-byte text message, close, exit. Servers: from exec to the readiness line. hyperfine, {warmup} "
        "warm-up runs then {runs} runs each; peak RSS (VmHWM) of one more client run, held after its result. "
        "Ranked by mean.")


def client_argv(client: Program, server: RunningServer) -> list[str]:
    return [*client.command, "--url", server.url("/"), "--type", "text", "--size", "11", "--count", "1",
            "--warmup", "0", "--mode", "burst"]


def server_script(server: Program) -> str:
    cmd = " ".join(shlex.quote(x) for x in [*server.command, "--port", "0"])
    return (f'coproc S {{ exec {cmd} 2>/dev/null; }}; read -r line <&"${{S[0]}}"; kill -9 "$S_PID"; '
            f'[[ $line == WSBENCH-READY* ]]')


def _hyperfine(hyperfine: str, name: str, command: str, env: dict[str, str], warmup: int, runs: int,
               out_json: Path, log: Path, shell: bool) -> StartupTime:
    """hyperfine's figures of ``command``, or why there are none (the entry's error)."""
    argv = [hyperfine, "--warmup", str(warmup), "--runs", str(runs), "--export-json", str(out_json),
            "--command-name", name, "--style", "basic"]
    argv += ["--shell", "bash"] if shell else ["-N"]
    try:
        code = procs.run([*argv, command], cwd=ROOT, timeout_s=TIMEOUT_S, stdout_path=log, stderr_path=log,
                         env={**os.environ, **env})
    except TimeoutError as exc:
        return StartupTime(command, error=str(exc))
    except OSError as exc:
        raise WsbenchError(f"cannot run hyperfine: {exc.strerror}") from None
    if code != 0:
        return StartupTime(command, error=f"hyperfine exited with code {code} (log: {log})")
    try:
        result = json.loads(out_json.read_text())["results"][0]
    except (OSError, ValueError, KeyError, IndexError) as exc:
        return StartupTime(command, error=f"hyperfine's {out_json.name} is unreadable ({exc})")
    return StartupTime(command, Figures(result["mean"], result.get("stddev") or 0.0, result["median"], result["min"],
                                        result["max"], len(result.get("times", [])) or runs))


def peak_rss_kib(argv: list[str], env: dict[str, str], barrier_mode: str = "stdin",
                 timeout_s: float = 30.0) -> int | None:
    """The peak RSS (VmHWM) of one run of ``argv``, read while the client is held after its
    result (``WSBENCH_HOLD=1``, the client's barrier; None if it failed or timed out). Not
    wait4's ru_maxrss: a child forked from the harness inherits the harness's own
    high-water mark through exec."""
    barrier = hold_for(barrier_mode)
    proc = procs.spawn(argv, cwd=ROOT, env={**os.environ, **env, **barrier.env}, stdin_pipe=barrier.stdin)
    barrier.attach(proc)
    reader = procs.LineReader(proc)
    deadline = time.monotonic() + timeout_s
    peak = None
    try:
        while (line := reader.readline(deadline)) is not None:
            if line == START_LINE:
                if barrier.go():
                    return None
            elif line.startswith("{"):
                result = parse_result(line)
                peak = procfs.peak_rss_kib(proc.pid) if "error" not in result else None
                break
        return peak
    finally:
        reader.close()
        barrier.close()
        procs.terminate(proc)


def time_client(hyperfine: str, client: Program, server: RunningServer, warmup: int, runs: int,
                out_dir: Path) -> StartupTime:
    argv = client_argv(client, server)
    command = " ".join(shlex.quote(x) for x in argv)
    entry = _hyperfine(hyperfine, client.name, command, client.env, warmup, runs,
                       out_dir / f"client-{client.name}.json", out_dir / f"client-{client.name}.log", shell=False)
    if entry.error is None:
        entry.peak_rss_kib, entry.held_run = peak_rss_kib(argv, client.env, client.barrier), True
    return entry


def time_server(hyperfine: str, server: Program, warmup: int, runs: int, out_dir: Path) -> StartupTime:
    script = server_script(server)
    return _hyperfine(hyperfine, server.name, script, server.env, warmup, runs,
                      out_dir / f"server-{server.name}.json", out_dir / f"server-{server.name}.log", shell=True)


def hyperfine_version(hyperfine: str, out_dir: Path) -> str:
    path = out_dir / "hyperfine-version.txt"
    try:
        procs.run([hyperfine, "--version"], cwd=ROOT, timeout_s=10, stdout_path=path)
        return path.read_text().strip() or "unknown"
    except (OSError, TimeoutError):
        return "unknown"

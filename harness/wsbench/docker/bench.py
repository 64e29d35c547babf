"""``make bench-docker`` (``wsbench docker bench``): the suite with the servers in containers and the clients in the
runner container, through docker-compose.yml.

1. a private engine is started (dockerd.py) and the images built (images.py; cached);
2. the five servers come up (``docker-compose up -d``), each on its fixed loopback port and
   the servers' CPU set; each must pass its healthcheck and print its readiness line, and
   a server whose catalog entry has ``expect`` must say in its WSBENCH-INFO line what the
   catalog says (the node-ws images: ws with or without bufferutil), or the bench stops;
3. the runner runs ``wsbench run --target NAME=ws://127.0.0.1:PORT/ --target-pid NAME=PID``
   for every server: the same verification and measurement as on the host. The runner
   shares the host's PID namespace, so a server's CPU time and peak RSS are read from
   /proc of the container's process exactly as for a server the harness starts (its
   host PID comes from ``docker inspect``: ``State.Pid``, the server itself, PID 1 in its
   container); the image IDs, the CPU sets and limits, each server's runtime version as
   printed inside its container, and this method go to the results' environment
   (``docker``);
4. everything is taken down and the engine stopped, also on failure and Ctrl-C.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any, Sequence

from .. import environment, pinning
from ..catalog import load_catalog
from ..errors import WsbenchError
from ..paths import REPORTS_DIR, ROOT, report_files
from ..server import parse_info_line
from . import dockerd
from .dockerd import Engine
from .images import PORTS, RUNNER, SERVERS, build, compose, compose_env, image_ids, runtime_version_in

READY_TIMEOUT_S = 120.0
READINGS = ("host /proc of each server container's process (its host PID from docker inspect State.Pid; the "
            "runner shares the host PID namespace): CPU-time clock of the whole thread group and VmHWM, reset "
            "before every cell, as for a server the harness starts")
LOG = ROOT / "build" / "logs" / "docker-bench.log"


def cpu_sets() -> tuple[str, str]:
    """(servers, clients): the split of ``wsbench run --pin`` (servers on the upper half)."""
    split = pinning.plan()
    return ",".join(map(str, sorted(split.server))), ",".join(map(str, sorted(split.client)))


def wait_ready(eng: Engine, env: dict[str, str], services: Sequence[str],
               timeout_s: float = READY_TIMEOUT_S) -> dict[str, str]:
    """Container IDs of ``services`` once each is healthy and has printed its readiness
    line with its port; raise naming the first that does not get there."""
    ids = {s: compose(env, "ps", "-q", s).stdout.strip() for s in services}
    deadline = time.monotonic() + timeout_s
    pending = set(services)
    while pending:
        for service in sorted(pending):
            cid = ids[service]
            if not cid:
                raise WsbenchError(f"server container '{service}' was not created (log: {LOG})")
            state = json.loads(eng.docker("inspect", "--format", "{{json .State}}", cid).stdout)
            logs = eng.docker("logs", cid, check=False)
            if not state.get("Running"):
                said = (logs.stderr or logs.stdout).strip().splitlines()
                raise WsbenchError(f"server container '{service}' exited with code {state.get('ExitCode')}"
                                   + (f": {said[-1][:200]}" if said else ""))
            ready = f"WSBENCH-READY port={PORTS[service]}" in logs.stdout
            if ready and (state.get("Health") or {}).get("Status") == "healthy":
                pending.discard(service)
                check_info(service, logs.stdout)
        if pending and time.monotonic() > deadline:
            raise WsbenchError(f"server containers {', '.join(sorted(pending))} not healthy and ready within "
                               f"{timeout_s:g} s (docker logs; {LOG})")
        if pending:
            time.sleep(0.5)
    return ids


def info_of(log: str) -> dict[str, Any] | None:
    """The object of the WSBENCH-INFO line in a container's log (None: there is none)."""
    for line in log.splitlines():
        info = parse_info_line(line)
        if info is not None:
            return info
    return None


def check_info(service: str, log: str) -> dict[str, Any] | None:
    """What the server in the container said of itself, checked against its catalog
    entry's ``expect``; raise (one line) when it differs."""
    info = info_of(log)
    unmet = load_catalog().servers[service].unmet(info, "WSBENCH-INFO line")
    if unmet:
        raise WsbenchError(f"server container '{service}' is not what harness/runtimes.toml says: {unmet}")
    return info


def describe(eng: Engine, cid: str) -> dict[str, Any]:
    """A container's host PID and CPU limits."""
    info = json.loads(eng.docker("inspect", "--format", "{{json .}}", cid).stdout)
    host = info.get("HostConfig", {})
    return {"container": cid[:12], "pid": info["State"]["Pid"], "cpuset": host.get("CpusetCpus") or None,
            "nano_cpus": host.get("NanoCpus") or None, "cpu_quota": host.get("CpuQuota") or None,
            "cpu_period": host.get("CpuPeriod") or None, "network_mode": host.get("NetworkMode")}


def engine_info(eng: Engine) -> dict[str, Any]:
    info = json.loads(eng.docker("info", "--format", "{{json .}}").stdout)
    return {"server_version": info.get("ServerVersion"), "storage_driver": info.get("Driver"),
            "cgroup_driver": info.get("CgroupDriver"), "cgroup_version": info.get("CgroupVersion"),
            "compose": subprocess.run(["docker-compose", "version", "--short"], capture_output=True,
                                      text=True, timeout=30).stdout.strip()}


def bench(run_args: Sequence[str], build_only: bool = False) -> int:
    server_cpus, client_cpus = cpu_sets()
    with dockerd.running() as eng:
        _say(f"engine up (pid {eng.pid}, {eng.host}); building images (log: build/logs/docker-build.log)")
        t0 = time.monotonic()
        build(eng, [*SERVERS, RUNNER])
        _say(f"images ready in {time.monotonic() - t0:.0f} s")
        if build_only:
            return 0
        env = compose_env(eng, server_cpus=server_cpus, client_cpus=client_cpus)
        try:
            compose(env, "up", "-d", "--no-build", *SERVERS, timeout_s=300, log=LOG)
            extra = dockerd.foreign_networks(eng)
            if extra:
                raise WsbenchError(f"the engine has networks besides host and none: {', '.join(extra)}; "
                                   "wsbench uses host networking only")
            ids = wait_ready(eng, env, SERVERS)
            containers = {s: describe(eng, cid) for s, cid in ids.items()}
            catalog = load_catalog()
            in_images = {s: {"runtime": catalog.servers[s].runtime,
                             "version": runtime_version_in(eng, cid, catalog.runtimes[catalog.servers[s].runtime]),
                             "info": info_of(eng.docker("logs", cid, check=False).stdout)}
                         for s, cid in ids.items()}
            runner_limits = {"cpuset": client_cpus, "network_mode": "host", "pid_mode": "host"}
            env_file = report_files(REPORTS_DIR, "docker-env").json
            # The runner has no git: the host's provenance of the harness goes with the run.
            host = environment.collect([])
            provenance = {k: host[k] for k in ("git_commit", "git_dirty", "git_dirty_files")}
            env_file.write_text(json.dumps({**provenance, "docker": {
                "engine": engine_info(eng), "images": image_ids(eng, [*SERVERS, RUNNER]),
                "cpusets": {"servers": server_cpus, "clients": client_cpus},
                "cpu_limits": {**{s: {k: v for k, v in c.items() if k != "pid"} for s, c in containers.items()},
                               RUNNER: runner_limits},
                "server_runtimes": in_images, "readings": READINGS}}, indent=1) + "\n")
            targets = [a for s in SERVERS for a in ("--target", f"{s}=ws://127.0.0.1:{PORTS[s]}/",
                                                    "--target-pid", f"{s}={containers[s]['pid']}")]
            _say("servers healthy: " + ", ".join(f"{s} (pid {c['pid']}, CPUs {c['cpuset']})"
                                                  for s, c in containers.items())
                 + f"; clients in the runner on CPUs {client_cpus}")
            argv = ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "-p", "wsbench", "run", "--rm", "-T",
                    "--no-deps", RUNNER, "run", *targets, "--environment-from",
                    f"reports/{env_file.name}", *run_args]
            return subprocess.run(argv, env=env, cwd=ROOT, stdin=subprocess.DEVNULL).returncode
        finally:
            compose(env, "down", "-t", "2", timeout_s=120, log=LOG, check=False)


def _say(text: str) -> None:
    print(f"bench-docker: {text}", file=sys.stderr, flush=True)

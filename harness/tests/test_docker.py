"""The containers: docker-compose.yml is valid, every server image builds and passes the
harness's verification. Needs Docker (`make test` installs it, as `make docker-setup`
does) and root; skipped otherwise, with the reason — or failed, where
WSBENCH_REQUIRE_DOCKER is set (CI: a skip there would hide that the images no longer
build). The first build takes minutes; later ones reuse the engine's layer cache
(/var/lib/wsbench-docker)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from wsbench.catalog import load_catalog
from wsbench.docker import dockerd
from wsbench.docker.bench import check_info
from wsbench.docker.images import (COMPOSE_FILE, PORTS, RUNNER, SERVERS, build, compose_env, entrypoint,
                                   runtime_version_in)
from wsbench.environment import runtime_version
from wsbench.errors import WsbenchError
from wsbench.verify import verify_echo
from wsbench_runs import wsbench

ROOT = Path(__file__).resolve().parents[2]


def _why_no_engine() -> str | None:
    if os.environ.get("WSBENCH_SKIP_DOCKER"):
        return "WSBENCH_SKIP_DOCKER is set"
    return dockerd.unavailable()


def _no_engine(why: object) -> None:
    message = f"no Docker engine can be started: {why}"
    if os.environ.get("WSBENCH_REQUIRE_DOCKER") and not os.environ.get("WSBENCH_SKIP_DOCKER"):
        pytest.fail(f"{message} (WSBENCH_REQUIRE_DOCKER is set)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def eng() -> Iterator[dockerd.Engine]:
    why = _why_no_engine()
    if why:
        _no_engine(why)
    try:
        started = dockerd.start()
    except WsbenchError as exc:
        _no_engine(exc)
    try:
        yield started
        assert dockerd.foreign_networks(started) == []
    finally:
        assert dockerd.stop(started) is None
        if started.pid is not None:
            assert not Path(f"/proc/{started.pid}").exists() or \
                Path(f"/proc/{started.pid}/stat").read_text().split(") ")[1][0] in "ZX"


def test_the_docker_commands_answer_in_one_line_without_an_engine() -> None:
    check = wsbench("docker", "engine", "check")
    assert check.returncode == (0 if dockerd.unavailable() is None else 1), check.stderr
    assert check.stdout.startswith("docker engine: ") and check.stdout.count("\n") == 1
    for args, said in ((["docker", "engine", "run"], "usage: wsbench docker engine run -- CMD ..."),
                       (["docker", "engine", "run", "--", "/nonexistent/cmd"], "/nonexistent/cmd: not found")):
        proc = wsbench(*args)
        assert proc.returncode == 2 and proc.stderr == f"wsbench docker: error: {said}\n", proc.stderr
    usage = wsbench("docker", "bench", "--suite", "quick")  # wsbench run's options go after --
    assert usage.returncode == 2 and "unrecognized arguments: --suite" in usage.stderr


def test_compose_file_is_valid_host_network_only_with_cpusets_and_healthchecks(eng: dockerd.Engine) -> None:
    if shutil.which("docker-compose") is None:
        pytest.skip("docker-compose is not installed (make docker-setup)")
    env = compose_env(eng, server_cpus="1", client_cpus="0")
    out = subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), "-p", "wsbench", "config"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    services = subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), "--profile", "runner", "config",
                               "--services"], env=env, capture_output=True, text=True, timeout=60)
    assert sorted(services.stdout.split()) == sorted([*SERVERS, RUNNER]), services.stderr
    assert text.count("network_mode: host") == len(SERVERS) + 1
    assert not re.search(r"^networks:", text, re.M) and "ipv4_address" not in text
    assert text.count("cpuset: '1'") == len(SERVERS) and text.count("cpuset: '0'") == 1
    for port in PORTS.values():
        assert f"exec 3<>/dev/tcp/127.0.0.1/{port}" in text and f"- '{port}'" in text


def test_every_server_image_builds_and_passes_the_harness_verification(eng: dockerd.Engine,
                                                                        tmp_path: Path) -> None:
    t0 = time.monotonic()
    build(eng, SERVERS)
    print(f"\nserver images built in {time.monotonic() - t0:.0f} s")
    catalog = load_catalog()
    for name in SERVERS:
        program = catalog.servers[name]
        assert entrypoint(eng, name) == list(program.command), f"{name}: image and harness/runtimes.toml disagree"
        cid = eng.docker("run", "-d", "--network", "host", "--name", f"wsbench-test-{name}-{os.getpid()}",
                         f"wsbench/{name}:local", "--port", "0").stdout.strip()
        try:
            port = _ready_port(eng, cid)
            check = verify_echo(f"ws://127.0.0.1:{port}/")
            assert check.ok, f"{name}: {check.error}"
            assert len(check.checks) == 8
            # What the server says it runs with is what the catalog says (node-ws-native: ws
            # with bufferutil loaded; node-ws: without), as make bench-docker checks it.
            info = check_info(name, eng.docker("logs", cid, check=False).stdout)
            assert (info is not None) == bool(program.expect), name
            env = eng.docker("image", "inspect", "--format", "{{json .Config.Env}}", f"wsbench/{name}:local").stdout
            assert all(f"{k}={v}" in env for k, v in program.env.items()), f"{name}: image env {env}"
            # The runtime in the image is the pinned one the host runs (issue 12: the node-ws
            # image once ran Debian's Node 18 while the host ran Node 20).
            runtime = catalog.runtimes[program.runtime]
            assert runtime_version_in(eng, cid, runtime) == runtime_version(runtime), name
        finally:
            eng.docker("rm", "-f", cid, check=False)


def _ready_port(eng: dockerd.Engine, cid: str, timeout_s: float = 30) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        logs = eng.docker("logs", cid, check=False)
        match = re.search(r"^WSBENCH-READY port=(\d+)$", logs.stdout, re.M)
        if match:
            return int(match.group(1))
        time.sleep(0.2)
    raise AssertionError(f"container {cid[:12]} printed no readiness line: {logs.stdout[-200:]} {logs.stderr[-200:]}")

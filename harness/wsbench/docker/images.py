"""Building the images of docker-compose.yml: the base image (scripts/docker-base.sh), then
the servers and the runner from docker/Dockerfile, with the build args taken from the
same pins as ``make setup`` (scripts/pins.sh, package-lock.json, requirements.txt)."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

from ..catalog import Runtime
from ..errors import WsbenchError
from ..paths import ROOT
from .dockerd import Engine

SERVERS = ("node-ws", "node-ws-native", "bun", "deno", "lws")
RUNNER = "runner"
COMPOSE_FILE = ROOT / "docker-compose.yml"
PROJECT = "wsbench"
BASE_IMAGE = "wsbench/base:bookworm"
PORTS = {"node-ws": 9101, "bun": 9102, "deno": 9103, "lws": 9104, "node-ws-native": 9105}
LOG_DIR = ROOT / "build" / "logs"
CA_DIR = ROOT / "docker" / "ca"  # generated, git-ignored: the host's local CAs for the build
LOCAL_CAS = Path("/usr/local/share/ca-certificates")
TOOLS_DIR = ROOT / "docker" / "tools"  # generated, git-ignored: the host's k6 for the runner
HOST_K6 = ROOT / "build" / "tools" / "k6" / "k6"


def pins(path: Path = ROOT / "scripts" / "pins.sh") -> dict[str, str]:
    """The KEY=VALUE lines of scripts/pins.sh."""
    out = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Z_]+)=(\S+)$", line.strip())
        if match:
            out[match.group(1)] = match.group(2)
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compose_env(engine: Engine, base_image: str = BASE_IMAGE, server_cpus: str | None = None,
                client_cpus: str | None = None) -> dict[str, str]:
    """The environment docker-compose.yml reads: build args, ports and CPU sets."""
    p = pins()
    env = {**engine.env(),
           "WSBENCH_BASE_IMAGE": base_image,
           "WSBENCH_LWS_VERSION": p["LWS_VER"], "WSBENCH_QUICKJS_VERSION": p["QJS_VER"],
           "WSBENCH_NPM_LOCK_SHA256": _sha256(ROOT / "package-lock.json"),
           "WSBENCH_REQUIREMENTS_SHA256": _sha256(ROOT / "requirements.txt")}
    env.update({f"WSBENCH_PORT_{name.upper().replace('-', '_')}": str(port) for name, port in PORTS.items()})
    if server_cpus is not None:
        env["WSBENCH_SERVER_CPUS"] = server_cpus
    if client_cpus is not None:
        env["WSBENCH_CLIENT_CPUS"] = client_cpus
    return env


def compose(env: dict[str, str], *args: str, timeout_s: float = 600, log: Path | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
    """``docker-compose -f docker-compose.yml -p wsbench ARGS``; its output goes to ``log``
    (appended) when given. A failure raises with the last line it printed."""
    argv = ["docker-compose", "-f", str(COMPOSE_FILE), "-p", PROJECT, *args]
    try:
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "a") as out:
                out.write(f"+ {' '.join(argv)}\n")
                out.flush()
                proc = subprocess.run(argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True,
                                      timeout=timeout_s, stdin=subprocess.DEVNULL)
        else:
            proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s,
                                  stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise WsbenchError("docker-compose is not installed (apt-get install docker-compose)") from None
    except subprocess.TimeoutExpired:
        raise WsbenchError(f"docker-compose {' '.join(args[:2])} did not finish within {timeout_s:g} s"
                           + (f" (log: {log})" if log else "")) from None
    if check and proc.returncode != 0:
        said = _last_line(log) if log else (proc.stderr or proc.stdout).strip().splitlines()[-1:]
        raise WsbenchError(f"docker-compose {' '.join(args[:2])} failed (exit {proc.returncode})"
                           + (f", log: {log}" if log else "") + (f": {said[0][:300]}" if said else ""))
    return proc


def _last_line(log: Path | None) -> list[str]:
    if log is None:
        return []
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return []
    return lines[-1:]


def ensure_base(engine: Engine, log: Path = LOG_DIR / "docker-base.log") -> None:
    """wsbench/base:bookworm, built by scripts/docker-base.sh unless it exists."""
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "docker-base.sh")], env=engine.env(), cwd=ROOT,
                          capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        raise WsbenchError(said[-1] if said else f"scripts/docker-base.sh failed (exit {proc.returncode})")


def local_cas(source: Path = LOCAL_CAS, target: Path = CA_DIR) -> list[str]:
    """Copy the CA certificates this host added locally into docker/ca/ (the build trusts
    them: npm and pip behind a TLS-inspecting proxy need them). Returns their names."""
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.crt"):
        old.unlink()
    names = []
    for cert in sorted(source.rglob("*.crt")) if source.is_dir() else []:
        (target / cert.name).write_bytes(cert.read_bytes())
        names.append(cert.name)
    (target / "README").write_text("Generated by harness/wsbench/docker/images.py: the CAs of "
                                   f"{source} on the building host (git-ignored).\n")
    return names


def stage_k6(source: Path = HOST_K6, target: Path = TOOLS_DIR) -> bool:
    """Copy the k6 that make setup built (scripts/setup-k6.sh: static, the pinned version)
    into docker/tools/k6/ for the runner image, which has no Go to build it; whether there
    was one (without it the runner's k6 cells say it is missing)."""
    (target / "k6").mkdir(parents=True, exist_ok=True)
    (target / "README").write_text("Generated by harness/wsbench/docker/images.py: build/tools/k6/k6 of the "
                                   "building host, for the runner image (git-ignored).\n")
    staged = target / "k6" / "k6"
    if not source.exists():
        staged.unlink(missing_ok=True)
        return False
    if not staged.exists() or staged.stat().st_size != source.stat().st_size or \
            staged.read_bytes() != source.read_bytes():
        shutil.copy2(source, staged)
    return True


def build(engine: Engine, services: Sequence[str], base_image: str = BASE_IMAGE,
          log: Path = LOG_DIR / "docker-build.log") -> None:
    """Build the images of ``services`` (the builder stage is shared: after the first, each
    reuses its cached layers)."""
    if base_image == BASE_IMAGE:
        ensure_base(engine)
    local_cas()
    stage_k6()
    compose(compose_env(engine, base_image), "build", *services, timeout_s=3600, log=log)


def image_ids(engine: Engine, services: Sequence[str]) -> dict[str, dict[str, str]]:
    """Per service its image tag and image ID."""
    out = {}
    for service in services:
        tag = f"wsbench/{service}:local"
        image_id = engine.docker("image", "inspect", "--format", "{{.Id}}", tag).stdout.strip()
        out[service] = {"image": tag, "id": image_id}
    return out


def runtime_version_in(engine: Engine, container: str, runtime: Runtime) -> str:
    """The version of ``runtime`` as its own version command prints it inside a running
    container (the server images hold their runtime at the paths of harness/runtimes.toml),
    in the form of environment.runtime_version on the host, so the two compare."""
    if not runtime.version_cmd:
        return "unknown (no version command)"
    proc = engine.docker("exec", container, *runtime.version_cmd, check=False, timeout_s=60)
    text = (proc.stdout or proc.stderr).strip()
    if proc.returncode != 0 or not text:
        return f"unavailable (exit {proc.returncode})"
    return " ".join(text.splitlines()[0].split())


def entrypoint(engine: Engine, service: str) -> list[str]:
    import json

    text = engine.docker("image", "inspect", "--format", "{{json .Config.Entrypoint}}",
                         f"wsbench/{service}:local").stdout
    return list(json.loads(text) or [])

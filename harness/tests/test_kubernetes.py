"""deploy/kubernetes/ (docs/scaling.md, "On Kubernetes"): every manifest is valid against
the Kubernetes API's schemas (kubeconform, strict: an unknown field is an error; the schemas
of Kubernetes 1.37 from the pinned kubernetes-validate wheel, offline; both fetched on first
use by scripts/setup-kubeconform.sh), a broken one is refused, and the manifests say what
the issue asks: the scheduler, the load workers spread over nodes, the server behind a
Service with a worker on its host, Guaranteed QoS on every pod."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from wsbench_runs import ROOT

MANIFESTS = sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))


@pytest.fixture(scope="module")
def kubeconform() -> list[str]:
    setup = subprocess.run([str(ROOT / "scripts" / "setup-kubeconform.sh")], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
    assert setup.returncode == 0, setup.stderr
    binary, location = setup.stdout.splitlines()[-2:]
    return [binary, "-strict", "-summary", "-schema-location", location]


def validate(kubeconform: list[str], *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*kubeconform, *map(str, files)], capture_output=True, text=True, timeout=120)


def test_every_manifest_is_valid_against_the_kubernetes_schemas(kubeconform: list[str]) -> None:
    assert {p.name for p in MANIFESTS} == {"namespace.yaml", "scheduler.yaml", "load-workers.yaml", "server.yaml",
                                           "coordinator.yaml"}
    proc = validate(kubeconform, *MANIFESTS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Valid: 8, Invalid: 0, Errors: 0, Skipped: 0" in proc.stdout, proc.stdout


@pytest.mark.parametrize("old, new, why", [
    ("topologySpreadConstraints:", "topologySpreadConstraint:", "additional properties 'topologySpreadConstraint'"),
    ("replicas: 3", "replicas: three", "want"),
    ("kind: StatefulSet", "kind: StatefulSets", "could not find schema for StatefulSets"),
])
def test_a_broken_manifest_is_refused(kubeconform: list[str], tmp_path: Path, old: str, new: str, why: str) -> None:
    text = (ROOT / "deploy" / "kubernetes" / "load-workers.yaml").read_text()
    assert old in text
    broken = tmp_path / "load-workers.yaml"
    broken.write_text(text.replace(old, new, 1))
    proc = validate(kubeconform, broken)
    assert proc.returncode == 1 and why in proc.stdout, proc.stdout


def _documents() -> Iterator[dict[str, Any]]:
    for path in MANIFESTS:
        yield from (d for d in yaml.safe_load_all(path.read_text()) if d)


def _pods(doc: dict[str, Any]) -> dict[str, Any] | None:
    if doc["kind"] == "Pod":
        return doc["spec"]
    return doc["spec"]["template"]["spec"] if doc["kind"] in ("Deployment", "StatefulSet") else None


def test_the_manifests_hold_what_a_distributed_run_needs() -> None:
    docs = {(d["kind"], d["metadata"]["name"]): d for d in _documents()}
    for (kind, name), doc in docs.items():
        pod = _pods(doc)
        if pod is None:
            continue
        for c in pod["containers"]:  # Guaranteed QoS: every container's requests equal its limits
            assert c["resources"]["requests"] == c["resources"]["limits"], (name, c["name"])
            assert set(c["resources"]["limits"]) == {"cpu", "memory"}, (name, c["name"])
            assert c["image"] in ("wsbench/runner:local", "wsbench/lws:local") and c["imagePullPolicy"] == "Never"
    load = docs["StatefulSet", "wsbench-load"]["spec"]["template"]["spec"]
    anti = load["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["topologyKey"] == "kubernetes.io/hostname"
    assert anti["labelSelector"]["matchExpressions"][0]["values"] == ["load", "server"]
    assert load["topologySpreadConstraints"][0]["whenUnsatisfiable"] == "DoNotSchedule"
    server = docs["Deployment", "wsbench-server"]["spec"]["template"]["spec"]
    assert server["shareProcessNamespace"] is True
    lws, observer = server["containers"]
    assert lws["args"] == ["--port", "9104", "--host", "$(POD_IP)"]  # the contract's --host: the pod's address
    assert observer["command"][:5] == ["dask", "worker", "tcp://wsbench-scheduler:8786", "--name", "server-host"]
    assert docs["Service", "wsbench-lws"]["spec"]["selector"] == {"wsbench/role": "server"}
    assert docs["Service", "wsbench-scheduler"]["spec"]["ports"][0]["port"] == 8786

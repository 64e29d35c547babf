#!/usr/bin/env python3
"""The strict Kubernetes JSON schemas of a kubernetes-validate wheel as files kubeconform
loads offline (scripts/setup-kubeconform.sh):

    scripts/k8s_schemas.py WHEEL OUT FOLDER     e.g. FOLDER = v1.37.0-local-strict

Each schema's "$id" (an https:// base, which would send its references to the network) is
dropped and its references to "/api/_definitions.json" point at the file beside it.
"""

import json
import sys
import zipfile
from pathlib import Path
from typing import Any


def loadable(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (v.replace("/api/_definitions.json", "_definitions.json", 1) if k == "$ref" and isinstance(v, str)
                    else loadable(v))
                for k, v in node.items() if k != "$id"}
    if isinstance(node, list):
        return [loadable(v) for v in node]
    return node


def main(wheel: str, out: str, folder: str) -> int:
    prefix = f"kubernetes_validate/kubernetes-json-schema/{folder}/"
    target = Path(out)
    target.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.startswith(prefix) and n.endswith(".json")]
        for name in names:
            (target / name[len(prefix):]).write_text(json.dumps(loadable(json.loads(z.read(name)))))
    if len(names) < 500:
        print(f"k8s_schemas: only {len(names)} schemas under {prefix} in {wheel}", file=sys.stderr)
        return 1
    (target / ".complete").write_text(f"{len(names)} schemas from {Path(wheel).name}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

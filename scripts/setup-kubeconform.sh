#!/usr/bin/env bash
# kubeconform (pinned), the validator of deploy/kubernetes/*.yaml, built from the Go module
# proxy into build/tools/kubeconform-<version>/kubeconform, and the Kubernetes API's JSON
# schemas it validates against, offline: the strict schemas of Kubernetes 1.37 that the
# PyPI package kubernetes-validate bundles (generated from the Kubernetes OpenAPI spec;
# the wheel pinned by version and sha256), made loadable from files in
# build/tools/k8s-schemas-<version>/ (their "$id" dropped and "/api/_definitions.json"
# references made relative, so that each resolves to the file beside it).
# kubeconform would download its schemas from GitHub, which is not reachable here.
# Not part of `make setup`: only the test that validates the manifests calls it, like
# setup-actionlint.sh. Prints two lines: kubeconform, and the schema location template to give it.
set -euo pipefail
STEP_NAME=setup-kubeconform
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION=v0.7.0
K8S=1.37.0
WHEEL=kubernetes_validate-$K8S-py3-none-any.whl
WHEEL_SHA256=85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9
OUT=$ROOT/build/tools/kubeconform-$VERSION
BIN=$OUT/kubeconform
SCHEMAS=$ROOT/build/tools/k8s-schemas-$K8S
LOCATION="$SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json"

if [[ ! -x $BIN ]]; then
    # its go.mod asks for a newer Go than Debian's golang-go (1.19): the machine's Go builds it
    go_install kubeconform "kubeconform $VERSION" "$OUT" "github.com/yannh/kubeconform/cmd/kubeconform@$VERSION"
    [[ -x $BIN ]] || fail "find $BIN after building it" "$LOGS/kubeconform.log"
fi

if [[ ! -f $SCHEMAS/.complete ]]; then
    say "fetching the Kubernetes $K8S schemas (PyPI: kubernetes-validate $K8S)" >&2
    PY=$ROOT/.venv/bin/python
    [[ -x $PY ]] || PY=python3
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    quietly kubeconform "download $WHEEL" "$PY" -m pip download --disable-pip-version-check --no-deps \
        --only-binary :all: -d "$tmp" "kubernetes-validate==$K8S"
    echo "$WHEEL_SHA256  $tmp/$WHEEL" | sha256sum -c --quiet - >/dev/null 2>&1 \
        || fail "check the sha256 of $WHEEL (expected $WHEEL_SHA256)"
    rm -rf "$SCHEMAS"
    quietly kubeconform "unpack the schemas" "$PY" "$ROOT/scripts/k8s_schemas.py" "$tmp/$WHEEL" "$SCHEMAS" \
        "v$K8S-local-strict"
fi
printf '%s\n%s\n' "$BIN" "$LOCATION"

#!/usr/bin/env bash
# Create .venv with the pinned Python packages, the wsbench harness and the test kit
# (testkit/: what every room's tests import) installed, both editable.
set -euo pipefail
STEP_NAME=setup-python
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

key=$(hash_of "$ROOT/requirements.txt" "$ROOT/harness/pyproject.toml" "$ROOT/testkit/pyproject.toml")
if stamp_is python "$key" && [[ -x $ROOT/.venv/bin/wsbench ]] && "$ROOT/.venv/bin/python" -c "import testkit" 2>/dev/null; then
    exit 0
fi
say "creating .venv (pinned: requirements.txt)"
quietly python "create .venv" python3 -m venv "$ROOT/.venv"
quietly python "install requirements.txt" "$ROOT/.venv/bin/pip" install --disable-pip-version-check -r "$ROOT/requirements.txt"
quietly python "install the harness" "$ROOT/.venv/bin/pip" install --disable-pip-version-check --no-deps -e "$ROOT/harness"
quietly python "install the test kit" "$ROOT/.venv/bin/pip" install --disable-pip-version-check --no-deps -e "$ROOT/testkit"
stamp_set python "$key"

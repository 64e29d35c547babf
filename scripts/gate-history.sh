#!/usr/bin/env bash
# Fill a history directory with gate reports of past commits, each commit gated against its
# first parent as the pull request that made it would have been (`wsbench gate --base
# PARENT --head COMMIT`: both built from git in build/base/, counted by this checkout's
# harness), so that `wsbench history DIR` has a trend before the nightly builds one:
#
#   scripts/gate-history.sh DIR COMMIT...          # e.g. DIR=build/history/runs
#   GATE_ARGS="--only wall --wall-workload text_11 --wall-repetitions 2" scripts/gate-history.sh DIR COMMIT...
#
# One file per commit and call, DIR/<UTC time>-<commit>.json (the report, as the nightly
# keeps it). The gate's exit code (0, 1, 2) is in each report; anything else stops here.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: scripts/gate-history.sh DIR COMMIT...}
shift
mkdir -p "$out"
for ref in "$@"; do
    sha=$(git -C "$ROOT" rev-parse --verify "$ref^{commit}")
    parent=$(git -C "$ROOT" rev-parse --verify "$sha^1")
    tmp=$(mktemp -d)
    set +e
    # shellcheck disable=SC2086  # GATE_ARGS is a list of options
    "$ROOT/.venv/bin/wsbench" gate --base "$parent" --head "$sha" --out "$tmp" -q ${GATE_ARGS:-}
    code=$?
    set -e
    report=$(find "$tmp" -maxdepth 1 -name 'gate-2*.json' | head -n 1)
    if [[ $code -gt 2 || -z $report ]]; then
        echo "gate-history: the gate of $ref stopped (exit $code) without a report" >&2
        exit 1
    fi
    dest="$out/$(date -u +%Y%m%dT%H%M%SZ)-${sha:0:12}.json"
    cp "$report" "$dest"
    echo "gate-history: $ref (${sha:0:12}) against ${parent:0:12}: exit $code -> $dest"
    rm -rf "$tmp"
done

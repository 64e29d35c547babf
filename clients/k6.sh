#!/bin/sh
# Starts the k6 adapter (clients/k6.mjs) with the workload's command line: k6 takes no
# script arguments, so they travel in WSBENCH_ARGV, one a line. exec: the process the
# harness reads (CPU clock, peak RSS) is k6 itself. k6 prints console.log lines verbatim
# on stdout (--log-output=stdout --log-format=raw); --no-usage-report: k6 would otherwise
# report the run to its makers (no network beyond loopback here); --quiet: no progress bar.
# Everything else is k6's default, as a team would run it (its end-of-test summary comes
# after the result line, and the harness ignores it).
here=$(dirname "$0")
for a in "$@"; do
    case $a in *"
"*) echo '{"error": "an argument holds a newline: it cannot travel in WSBENCH_ARGV"}'; exit 2 ;; esac
done
WSBENCH_ARGV=$(printf '%s\n' "$@")
export WSBENCH_ARGV
exec "$here/../build/tools/k6/k6" run --no-usage-report --quiet --log-output=stdout --log-format=raw \
    "$here/k6.mjs"

# wsbench — the two commands: `make bench` and `make test`. Both install what is missing
# first (`make setup`; a second run is a fast no-op). `make report` renders the newest run;
# `make profile` profiles text_11 and bin_64k (every client against lws, every server driven
# by loadgen) and times every runtime's start-up. `make gate` is the regression gate
# (README, "The regression gate"); `make gate-update` re-takes its baseline.

SHELL := /bin/bash
WSBENCH := .venv/bin/wsbench
PYTEST := .venv/bin/python -m pytest
SUITE ?= quick
ARGS ?=

.PHONY: setup bench test report profile gate gate-update lint-workflows list clean

setup:
	@scripts/setup-apt.sh
	@scripts/setup-js.sh
	@scripts/setup-python.sh
	@scripts/setup-native.sh
	@scripts/setup-profile.sh

bench: setup
	@$(WSBENCH) run --suite $(SUITE) $(ARGS)

# The newest reports/run-*.json (their names sort by time) into reports/latest/: index.html,
# results.md, results.csv, and a screenshot of the page from headless Chromium.
report: setup
	@latest=$$(ls reports/run-*.json 2>/dev/null | sort | tail -n 1); \
	if [[ -z $$latest ]]; then echo "make report: no reports/run-*.json yet (run: make bench)" >&2; exit 1; fi; \
	$(WSBENCH) report "$$latest" --format md,html,csv -o reports/latest --screenshot

# Profiles under profiles/<time>/, results in reports/profile-<time>.{json,md} (never ranked).
profile: setup
	@$(WSBENCH) profile --matrix --startup --overhead-runs 3 $(ARGS)

# Exit 0: nothing regressed; 1: a confirmed regression; 2: the gate could not run (why, in one line).
gate: setup
	@$(WSBENCH) gate $(ARGS)

# After a change that moves the figures on purpose: new deterministic counts (both
# profiles) and wall-clock ratios into baselines/gate.json (commit it; the diff shows what moved).
gate-update: setup
	@$(WSBENCH) gate --update $(ARGS)

# actionlint (pinned; built from the Go module proxy on first use) over the workflows.
lint-workflows:
	@bin=$$(scripts/setup-actionlint.sh) && "$$bin" .github/workflows/*.yml && echo "actionlint: workflows ok"

test: setup
	@$(PYTEST) -q harness/tests clients/tests clients/loadgen/tests quickjs-websocket/tests

list: setup
	@$(WSBENCH) list

clean:
	rm -rf build .venv node_modules

# wsbench — the two commands: `make bench` and `make test`. Both install what is missing
# first (`make setup`; a second run is a fast no-op).

SHELL := /bin/bash
WSBENCH := .venv/bin/wsbench
PYTEST := .venv/bin/python -m pytest
SUITE ?= quick
ARGS ?=

.PHONY: setup bench test list clean

setup:
	@scripts/setup-apt.sh
	@scripts/setup-js.sh
	@scripts/setup-python.sh
	@scripts/setup-native.sh

bench: setup
	@$(WSBENCH) run --suite $(SUITE) $(ARGS)

test: setup
	@$(PYTEST) -q harness/tests clients/tests clients/loadgen/tests quickjs-websocket/tests

list: setup
	@$(WSBENCH) list

clean:
	rm -rf build .venv node_modules

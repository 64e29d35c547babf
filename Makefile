# wsbench — the two commands: `make bench` and `make test`. Both install what is missing
# first (`make setup`; a second run is a fast no-op). `make report` renders the newest run;
# `make profile` profiles text_11 and bin_64k (every client against lws, every server driven
# by loadgen) and times every runtime's start-up. `make bench-docker` runs the suite with
# the servers in containers (docker-compose.yml; a private Docker engine, host network only).

SHELL := /bin/bash
WSBENCH := .venv/bin/wsbench
PYTEST := .venv/bin/python -m pytest
PY := .venv/bin/python
SUITE ?= quick
ARGS ?=

.PHONY: setup bench test report profile list clean docker-setup docker-base docker-images bench-docker

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

# Containers: docker.io, docker-compose and debootstrap (never started as a system service),
# the base image (debootstrap + docker import, Debian mirror only), the images, the suite.
docker-setup: setup
	@scripts/setup-apt.sh docker

docker-base: docker-setup
	@$(PY) -m wsbench.docker.engine run -- scripts/docker-base.sh

docker-images: docker-setup
	@$(PY) -m wsbench.docker.bench --build-only

bench-docker: docker-setup
	@$(PY) -m wsbench.docker.bench -- --suite $(SUITE) $(ARGS)

test: setup
	@$(PYTEST) -q -rs harness/tests clients/tests clients/loadgen/tests quickjs-websocket/tests

list: setup
	@$(WSBENCH) list

clean:
	rm -rf build .venv node_modules

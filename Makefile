# wsbench — the two commands: `make bench` and `make test`. Both install what is missing
# first (`make setup`; a second run is a fast no-op). `make report` renders the newest run;
# `make profile` profiles text_11 and bin_64k (every client against lws, every server driven
# by loadgen) and times every runtime's start-up.  `make fuzz` runs every libFuzzer target
# for FUZZ_SECONDS each (scripts/fuzz.py); `make test-asan` runs the quickjs-websocket tests
# on a build of qjs and the module with ASan and UBSan. `make gate` is the regression gate
# (docs/gate.md; `make gate BASE=REF` against another commit); `make gate-update` re-takes its baseline.
# `make bench-docker` runs the suite with the servers in containers (docker-compose.yml;
# a private Docker engine, host network only). `make setup-arm` cross-builds the QuickJS
# client for armhf and `make test-arm` runs its tests under qemu-arm (docs/arm.md);
# `make test-arm-sanitize` runs them on an armhf build with UBSan (with
# ARM_SANITIZE=address,undefined, ASan too). `make setup-openssl` builds trixie's OpenSSL
# into build/prefix-openssl and the QuickJS module against it, beside the system's (opt-in:
# docs/quickjs-websocket.md, "Full TLS handshakes: the library's share").

SHELL := /bin/bash
WSBENCH := .venv/bin/wsbench
PYTEST := .venv/bin/python -m pytest
PY := .venv/bin/python
SUITE ?= quick
ARGS ?=
FUZZ_SECONDS ?= 300

.PHONY: setup bench test test-stress test-asan setup-arm setup-openssl test-arm test-arm-sanitize fuzz report profile gate gate-update lint-workflows list clean docker-setup docker-base docker-images bench-docker

setup:
	@scripts/setup-apt.sh
	@scripts/setup-js.sh
	@scripts/setup-python.sh
	@scripts/setup-native.sh
	@scripts/setup-k6.sh
	@scripts/setup-profile.sh
	@scripts/setup-tls.sh

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
# BASE=REF: against that commit, built in build/base/<sha>/ and counted beside the head (docs/gate.md).
# (make itself exits 2 whenever a recipe fails: the gate's own code is in its last line,
# "wsbench gate: ... (exit N)", and in make's "Error N".)
BASE ?=
gate: setup
	@$(WSBENCH) gate $(if $(BASE),--base $(BASE)) $(ARGS)

# After a change that moves the figures on purpose: new deterministic counts (both
# profiles) and wall-clock ratios into baselines/gate.json (commit it; the diff shows what moved).
gate-update: setup
	@$(WSBENCH) gate --update $(ARGS)

# actionlint (pinned; built from the Go module proxy on first use) over the workflows.
lint-workflows:
	@bin=$$(scripts/setup-actionlint.sh) && "$$bin" .github/workflows/*.yml && echo "actionlint: workflows ok"

# test_docker.py builds the server images in a private engine: make test installs Docker
# (the docker-setup group) so that it runs wherever an engine can be started.
test: docker-setup
	@$(PYTEST) -q -rs --timeout=900 harness/tests clients/tests clients/loadgen/tests wsproto/tests quickjs-websocket/tests servers/lws/tests servers/tests

# Not part of make test: the tests that ever flaked (scripts/stress.py's list), N times
# under a CPU hog on every core; a table of each test's failures out of N (exit 1: any).
N ?= 5
test-stress: docker-setup
	@$(PY) scripts/stress.py -n $(N)

# the quickjs-websocket suite on qjs + module built with ASan and UBSan (valgrind tests skip)
test-asan: setup
	@scripts/setup-asan.sh
	@QJSWS_TEST_ASAN_ROOT=$(CURDIR)/build/asan/root $(PYTEST) -q quickjs-websocket/tests

# Not part of make setup: QuickJS, libwebsockets and the module cross-built for 32-bit ARM
# (armhf) in build/arm/, with the cross compiler and qemu-user from Debian (docs/arm.md).
setup-arm: setup
	@scripts/setup-apt.sh arm
	@scripts/setup-arm.sh

# the quickjs-websocket suite with the armhf qjs and module under qemu-arm, against the same
# x86 peers on loopback (what cannot apply under QEMU skips with its reason: docs/arm.md),
# and one armhf gate cell counted under qemu-arm with the counting plugin
test-arm: setup-arm
	@QJSWS_TEST_ARM_ROOT=$(CURDIR)/build/arm/root $(PYTEST) -q -rs --timeout=900 quickjs-websocket/tests \
		harness/tests/test_gate_armhf_qemu.py

# the module's suite on the armhf qjs and module built with UBSan (scripts/setup-arm-sanitize.sh,
# build/arm/ubsan/) under qemu-arm: a sanitizer report fails the test that produced it; with
# ARM_SANITIZE=address,undefined ASan too (build/arm/asan/: not clean under qemu-arm 7.2, docs/arm.md)
ARM_SANITIZE ?= undefined
ARM_SAN_ROOT = $(CURDIR)/build/arm/$(if $(findstring address,$(ARM_SANITIZE)),asan,ubsan)/root
test-arm-sanitize: setup-arm
	@scripts/setup-arm-sanitize.sh $(ARM_SANITIZE)
	@QJSWS_TEST_ARM_ROOT=$(ARM_SAN_ROOT) QJSWS_TEST_UBSAN=1 \
		$(if $(findstring address,$(ARM_SANITIZE)),QJSWS_TEST_ASAN_ROOT=$(ARM_SAN_ROOT)) \
		$(PYTEST) -q -rfEs --timeout=1800 quickjs-websocket/tests

# Not part of make setup: OpenSSL from Debian trixie's source package (OPENSSL_VER in
# scripts/pins.sh) in build/prefix-openssl, the QuickJS module linked against it in
# build/openssl/root (scripts/setup-openssl.sh); the system's OpenSSL is not touched.
setup-openssl: setup
	@scripts/setup-openssl.sh

# every fuzz target for FUZZ_SECONDS; corpora grow in build/fuzz/corpus, crashes in build/fuzz/crashes
fuzz: setup
	@.venv/bin/python scripts/fuzz.py run --seconds $(FUZZ_SECONDS)

# Containers: docker.io, docker-compose and debootstrap (never started as a system service),
# the base image (debootstrap + docker import, Debian mirror only), the images, the suite.
docker-setup: setup
	@scripts/setup-apt.sh docker

docker-base: docker-setup
	@$(WSBENCH) docker engine run -- scripts/docker-base.sh

docker-images: docker-setup
	@$(WSBENCH) docker bench --build-only

bench-docker: docker-setup
	@$(WSBENCH) docker bench -- --suite $(SUITE) $(ARGS)

list: setup
	@$(WSBENCH) list

clean:
	rm -rf build .venv node_modules

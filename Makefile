# httpdnsd developer entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash

# Use the toolchain in /opt/swift when swift is not already on PATH.
ifeq ($(shell command -v swift 2>/dev/null),)
export PATH := /opt/swift/usr/bin:$(PATH)
endif

SWIFT ?= swift
CONFIGURATION ?= debug
# SCRATCH_PATH=/tmp/build-x keeps a private build directory (default .build).
SCRATCH_PATH ?=
SWIFTFLAGS ?= -Xswiftc -warnings-as-errors $(if $(SCRATCH_PATH),--scratch-path $(SCRATCH_PATH))

# make run: UPSTREAMS=doh:http://127.0.0.1:8053/dns-query LOCALDNS=127.0.0.1:5353 ARGS="--listen 127.0.0.1:8080"
UPSTREAMS ?=
LOCALDNS ?=
ARGS ?=

.PHONY: all build test lint format run trial clean deps test-deps bench fuzz soak contract sanitize tsan revision test-allocations \
	console-assets console-screenshots

all: build

# What building and running needs (make run); test-deps adds the servers and tools the tests use.
deps:
	./scripts/install-deps.sh

test-deps:
	./scripts/install-deps.sh --test

# Records the git revision the binary reports (--version, httpdns_build_info) in the ignored
# Sources/CBuildRevision/revision.h; REVISION=... names one instead (docs/metrics.md).
REVISION ?=
revision:
	@./scripts/build-revision.sh $(REVISION) >/dev/null

build: revision
	$(SWIFT) build -c $(CONFIGURATION) $(SWIFTFLAGS)

# The house style (.swift-format): `make lint` fails on any finding (make test runs it first);
# `make format` rewrites the files in place.
SWIFT_FORMAT ?= swift-format
SWIFT_DIRS = Sources Tests bench/Sources fuzz/Sources fuzz/Tests
lint:
	$(SWIFT_FORMAT) lint --strict --recursive $(SWIFT_DIRS)

format:
	$(SWIFT_FORMAT) format --in-place --recursive $(SWIFT_DIRS)

# The web console's files (console/) compiled into httpdnsd as Sources/HTTPDNSServer/Console/ConsoleAssets.swift
# (docs/console.md); ConsoleSessionTests fails when that file is not in step with console/.
console-assets:
	python3 scripts/console-assets.py

# The screenshots of docs/console.md, taken by the browser test (Tests/IntegrationTests/ConsoleTests.swift).
console-screenshots: test-deps revision
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	HTTPDNS_CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console HTTPDNSD_BIN="$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)/httpdnsd" \
	$(SWIFT) test --skip-build --disable-xctest $(SWIFTFLAGS) --filter theConsoleInAHeadlessBrowser

# Builds everything (including the httpdnsd binary the integration tests run), then runs all test
# targets, then the fuzz package's FuzzCorpusTests (every seed corpus through its parser; the fuzz
# package, fuzz/Package.swift, depends on this one by path and builds in fuzz/.build), then the
# bench harness's own unit tests (its /proc readers, report arithmetic and section (4f)'s C
# forwarder against a small upstream of the test's), then the allocation
# test of a cache hit against a release binary (test-allocations, below).
# HTTPDNS_BUILT_BY_MAKE tells BuildRevisionTests that the binary carries the revision make recorded.
FUZZ_TEST_FLAGS ?= --package-path fuzz -Xswiftc -warnings-as-errors $(if $(SCRATCH_PATH),--scratch-path $(SCRATCH_PATH)-fuzz)
test: test-deps revision lint
	$(SWIFT) build $(SWIFTFLAGS)
	HTTPDNS_BUILT_BY_MAKE=1 HTTPDNSD_BIN="$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)/httpdnsd" $(SWIFT) test --disable-xctest $(SWIFTFLAGS)
	$(SWIFT) test --disable-xctest $(FUZZ_TEST_FLAGS)
	python3 -m unittest discover -s bench -t bench -p 'test_*.py'
	$(MAKE) --no-print-directory test-allocations

# The allocation test of a cache hit (Tests/IntegrationTests/FastPathAllocationTests.swift) against a
# release binary, built in its own scratch path: the debug binary's unoptimised code allocates on every
# hit (recorded as known issues there), so only this run checks that a hit allocates nothing of ours.
# `make test` ends with it.
ALLOCATIONS_SCRATCH ?= $(CURDIR)/.build-release
test-allocations: test-deps revision
	nice -n 10 $(SWIFT) build -c release --product httpdnsd --scratch-path $(ALLOCATIONS_SCRATCH) -Xswiftc -warnings-as-errors
	HTTPDNSD_BIN="$$($(SWIFT) build -c release --scratch-path $(ALLOCATIONS_SCRATCH) --show-bin-path)/httpdnsd" \
	$(SWIFT) test --disable-xctest $(SWIFTFLAGS) --filter FastPathAllocationTests

# The long form of the crash loop (Tests/IntegrationTests/CrashLoopTests.swift; make test runs 3
# cycles): SOAK_CYCLES SIGKILLs, each at a random moment up to SOAK_KILL_MS after the first
# preload reply of the run, with PRAGMA integrity_check and the acknowledged names checked after each.
SOAK_CYCLES ?= 30
SOAK_KILL_MS ?= 3000
soak: test-deps revision
	$(SWIFT) build $(SWIFTFLAGS)
	HTTPDNS_CRASH_CYCLES=$(SOAK_CYCLES) HTTPDNS_CRASH_MAX_KILL_MS=$(SOAK_KILL_MS) \
	HTTPDNSD_BIN="$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)/httpdnsd" \
	$(SWIFT) test --disable-xctest $(SWIFTFLAGS) --filter CrashLoopTests

run: deps build
	$(if $(UPSTREAMS),HTTPDNS_UPSTREAMS='$(UPSTREAMS)') \
	$(if $(LOCALDNS),HTTPDNS_LOCALDNS_SERVERS='$(LOCALDNS)') \
	"$$($(SWIFT) build -c $(CONFIGURATION) $(SWIFTFLAGS) --show-bin-path)/httpdnsd" $(ARGS)

# A trial on loopback only (scripts/trial.sh): unbound with the zone example.test, dnss as its
# RFC 8484 front and httpdnsd pointed at both, with a generated admin token it prints; Ctrl-C
# stops all three. TRIAL_PORT, TRIAL_DNS_PORT, TRIAL_DOH_PORT move them off 8080, 5353, 8053.
# Installs what running needs and the trial's two servers and curl, not the test tools.
trial: deps build
	./scripts/install-deps.sh unbound dnss curl
	HTTPDNSD_BIN="$$($(SWIFT) build -c $(CONFIGURATION) $(SWIFTFLAGS) --show-bin-path)/httpdnsd" ./scripts/trial.sh

# Benchmark of issue 4 (not part of `make test`): installs what is missing, builds a release binary in its
# own scratch path, measures on loopback, writes bench/RESULTS.md. Quick run: make bench BENCH_DURATION=2 BENCH_REPS=1
# (other BENCH_* variables: bench/run.py).
bench:
	./bench/deps.sh
	BENCH_SCRATCH="$${BENCH_SCRATCH:-$(CURDIR)/bench/out/build}" python3 bench/run.py

# The contract run's long form (scripts/test/contract.sh; make test runs one fixed seed):
# CONTRACT_RUNS runs, each with a new seed (printed; CONTRACT_SEED=N replays one) and
# CONTRACT_EXAMPLES examples an operation. Stops at the first run that finds a departure.
CONTRACT_RUNS ?= 20
CONTRACT_EXAMPLES ?= 25
contract: test-deps revision
	$(SWIFT) build $(SWIFTFLAGS)
	bin="$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)/httpdnsd"; \
	for run in $$(seq 1 $(CONTRACT_RUNS)); do \
	  echo "contract run $$run of $(CONTRACT_RUNS)"; \
	  ./scripts/test/contract.sh "$$bin" $(CONTRACT_EXAMPLES) || exit 1; \
	done

# Fuzzing (docs/fuzzing.md, not part of `make test`, which replays the seed corpora as
# FuzzCorpusTests): builds the libFuzzer binary with ASan in .build-fuzz, runs each target in turn.
# make fuzz FUZZ_SECONDS=180 FUZZ_TARGETS="host-name doh-json"
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(if $(FUZZ_TARGETS),FUZZ_TARGETS='$(FUZZ_TARGETS)') ./fuzz/run.sh

# The integration suite against an AddressSanitizer build of httpdnsd (docs/sanitizers.md): the
# binary is built in its own scratch path, the tests as `make test` builds them. A sanitizer report
# is written under $(SANITIZE_SCRATCH)/reports and fails the target.
SANITIZE_SCRATCH ?= $(CURDIR)/.build-sanitize
SANITIZE_FILTER ?= IntegrationTests
sanitize: test-deps revision
	nice -n 10 $(SWIFT) build --scratch-path $(SANITIZE_SCRATCH) --product httpdnsd -Xswiftc -sanitize=address
	rm -rf $(SANITIZE_SCRATCH)/reports && mkdir -p $(SANITIZE_SCRATCH)/reports
	ASAN_OPTIONS="$${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1}:log_path=$(SANITIZE_SCRATCH)/reports/asan" \
	HTTPDNSD_BIN="$$($(SWIFT) build --scratch-path $(SANITIZE_SCRATCH) --show-bin-path)/httpdnsd" \
	$(SWIFT) test --disable-xctest $(SWIFTFLAGS) --filter '$(SANITIZE_FILTER)'
	@if ls $(SANITIZE_SCRATCH)/reports/asan.* >/dev/null 2>&1; then cat $(SANITIZE_SCRATCH)/reports/asan.*; exit 1; fi
	@echo "sanitize: no AddressSanitizer report"

# The concurrency tests under ThreadSanitizer (docs/sanitizers.md), built in their own scratch path
# with -DHTTPDNS_TSAN, which compiles in the Mutex.withLock that tells TSan about the lock
# (Sources/HTTPDNSLocks/Mutex+ThreadSanitizer.swift). Reports go to
# $(TSAN_SCRATCH)/reports; any report fails the target and is printed.
TSAN_SCRATCH ?= $(CURDIR)/.build-tsan
TSAN_FILTER ?= HTTPDNSCoreTests|CurlEventLoopTests|HTTPServerTests|ServiceOverSocketTests|StopRaceTests
TSAN_FLAGS = --scratch-path $(TSAN_SCRATCH) --sanitize=thread -Xswiftc -DHTTPDNS_TSAN
tsan: test-deps revision
	nice -n 10 $(SWIFT) build --build-tests $(TSAN_FLAGS)
	rm -rf $(TSAN_SCRATCH)/reports && mkdir -p $(TSAN_SCRATCH)/reports
	@# A report makes the test process exit non-zero (TSan's exit code 66) after every test passed:
	@# the reports are printed whatever the tests' status, and either fails the target.
	TSAN_OPTIONS="$${TSAN_OPTIONS:-halt_on_error=0}:log_path=$(TSAN_SCRATCH)/reports/tsan" \
	nice -n 10 $(SWIFT) test --disable-xctest $(TSAN_FLAGS) --filter '$(TSAN_FILTER)'; status=$$?; \
	if ls $(TSAN_SCRATCH)/reports/tsan.* >/dev/null 2>&1; then cat $(TSAN_SCRATCH)/reports/tsan.*; exit 1; fi; \
	if [ $$status -ne 0 ]; then exit $$status; fi; \
	echo "tsan: no ThreadSanitizer report"

# Also the fuzz package's build (SwiftPM keeps a stale source list there when files move between
# modules) and the release build of the allocation test.
clean:
	$(SWIFT) package clean $(if $(SCRATCH_PATH),--scratch-path $(SCRATCH_PATH))
	rm -rf $(or $(SCRATCH_PATH),.build) fuzz/.build $(if $(SCRATCH_PATH),$(SCRATCH_PATH)-fuzz) $(ALLOCATIONS_SCRATCH)

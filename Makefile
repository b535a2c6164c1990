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

.PHONY: all build test run clean deps bench

all: build

deps:
	./scripts/install-deps.sh

build:
	$(SWIFT) build -c $(CONFIGURATION) $(SWIFTFLAGS)

# Builds everything (including the httpdnsd binary the integration tests run), then runs all test targets.
test: deps
	$(SWIFT) build $(SWIFTFLAGS)
	HTTPDNSD_BIN="$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)/httpdnsd" $(SWIFT) test --disable-xctest $(SWIFTFLAGS)

run: deps build
	$(if $(UPSTREAMS),HTTPDNS_UPSTREAMS='$(UPSTREAMS)') \
	$(if $(LOCALDNS),HTTPDNS_LOCALDNS_SERVERS='$(LOCALDNS)') \
	"$$($(SWIFT) build -c $(CONFIGURATION) $(SWIFTFLAGS) --show-bin-path)/httpdnsd" $(ARGS)

# Benchmark of issue 4 (not part of `make test`): installs what is missing, builds a release binary in its
# own scratch path, measures on loopback, writes bench/RESULTS.md. Quick run: make bench BENCH_DURATION=2 BENCH_REPS=1
# (other BENCH_* variables: bench/run.py).
bench:
	./bench/deps.sh
	BENCH_SCRATCH="$${BENCH_SCRATCH:-$(CURDIR)/bench/out/build}" python3 bench/run.py

clean:
	$(SWIFT) package clean $(if $(SCRATCH_PATH),--scratch-path $(SCRATCH_PATH))
	rm -rf $(or $(SCRATCH_PATH),.build)

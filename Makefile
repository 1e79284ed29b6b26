# Sotto: two commands for a newcomer on a fresh Debian machine.
#   make run    installs what is missing, builds, runs the real system end to end
#   make test   installs what is missing, builds, passes every test
# Also: make bench (release benchmarks, prints figures), make build, make deps.

SHELL := /bin/bash
SWIFT ?= swift
DEBIAN_PACKAGES := pkgconf g++ libsqlite3-dev sqlite3 libsecp256k1-dev libsodium-dev libsystemd-dev systemd dbus dbus-daemon dbus-bin time jq nats-server libnats-dev libfuse3-dev fuse3 libsecret-1-dev gnome-keyring libsecret-tools keyutils python3 python3-cryptography python3-dbus tmux
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps static-cxx build build-release test run bench stress clean

# apt-get only for what is missing, so a second run is instant and needs no network.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# The worker links libstdc++ statically when this exists (see Package.swift, docs/adr/0001).
static-cxx: deps
	@./scripts/prepare-static-cxx.sh

build: deps static-cxx
	$(SWIFT) build --build-tests

build-release: deps static-cxx
	$(SWIFT) build -c release

test: build
	$(SWIFT) test --skip-build

# The demo in two parts: two devices reaching each other directly, then through a relay
# (a nats-server the script starts) while one of them is offline.
run: build-release
	./scripts/demo.sh .build/release
	./scripts/demo-relay.sh .build/release

# Every benchmark, release builds, one after the other; each prints its figures and ratios.
bench: build-release
	"$$($(SWIFT) build -c release --show-bin-path)/ProtocolBench" 2000
	./Benchmarks/worker-bench.sh 300
	./Benchmarks/notify-bench.sh 100
	./Benchmarks/worker-alone-bench.sh 3000
	./Benchmarks/daemon-bench.sh
	./Benchmarks/daemon-e2e-bench.sh
	./Benchmarks/relay-bench.sh
	./Benchmarks/relay-e2e-bench.sh 200
	./Benchmarks/body-bench.sh 200 1000
	./Benchmarks/send-bench.sh 10 20
	./Benchmarks/fanout-bench.sh 1000 5
	./Benchmarks/relayd-sleeping-bench.sh 2ccde89 60 60000 1000
	./Benchmarks/device-at-rest-bench.sh 2ccde89 1000 60
	./Benchmarks/chat-start-bench.sh .build/release/sotto 1000
	./Benchmarks/cli-start-bench.sh .build/release/sotto 20
	./Benchmarks/chat-e2e-bench.sh
	./Benchmarks/page-up-bench.sh
	./Benchmarks/attachment-bench.sh 100 5
	./Benchmarks/attachment-relay-bench.sh 100 3
	./Benchmarks/attachment-save-bench.sh 100 3
	./Benchmarks/attachment-receive-bench.sh 100 3
	./Benchmarks/attachment-direct-bench.sh 100 3
	./Benchmarks/attachment-fanout-bench.sh 1000 100
	./Benchmarks/worker-attachment-rss-bench.sh 3
	./Benchmarks/relay-connection-cost.py 5000 20 10 30

# Issue #7: the stress suite with the full profile (50,000 pushes) against release binaries;
# each part prints one "STRESS <part>:" summary line, then 60 s of libFuzzer per parser
# (FUZZ_SECONDS=…). The short storm and keystore race run in `make test`.
# Issue #10: the full soak is an hour of rounds and idle gaps (SOTTO_SOAK_MINUTES=…) and
# prints each daemon's RSS curve ("STRESS soak-rss").
# Issue #21: the power-cut suites outside StressTests (relay, relayd, worker batch, keyring,
# content sealing) run their full profile here too: every step with all, half and torn cuts.
stress: build build-release
	SOTTO_STRESS_PROFILE=full SOTTO_STRESS_BIN=$(CURDIR)/.build/release \
	  $(SWIFT) test --skip-build --filter 'StressTests|PowerCut' 2>&1 | tee .build/stress.log | grep -E "^STRESS|✘|passed|failed"
	@! grep -q "✘" .build/stress.log
	./scripts/fuzz.sh $${FUZZ_SECONDS:-60}

clean:
	rm -rf .build

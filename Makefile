# workoutd — the commands a developer and CI use. `make help` lists them.

SWIFT      ?= swift
# umockdev's preload library redirects /dev and /sys for the whole process, so the libudev tests run
# in a process of their own under its wrapper, and every other test outside it.
UDEV_TESTS := DeviceDiscoveryTests
# The end-to-end and crash tests drive daemons hard (a gigabyte without a newline, kill -9 under load): they
# run after the rest rather than beside it, so their load does not starve the other tests' waits.
HEAVY_TESTS := EndToEndTests|DurabilityTests|ReplicationTests
APT_PACKAGES := socat libudev-dev umockdev libumockdev-dev libsystemd-dev libsqlite3-dev sqlite3 \
                systemd-container debootstrap valgrind python3 util-linux lld postgresql

.PHONY: help deps build test test-swift test-udev test-shell test-systemd fuzz demo bench soak clean

help:
	@echo "make deps          install the Debian packages the build and the tests need (root)"
	@echo "make demo          build, start workoutd on a socat pty pair, send the seed commands, show the replies"
	@echo "make test          every test: Swift tests, libudev tests under umockdev, the socat shell test,"
	@echo "                   the real-systemd test (root) and a 60 s fuzz run"
	@echo "make bench         release benchmarks, written to docs/benchmarks.md"
	@echo "make fuzz          fuzz for FUZZ_SECONDS (default 60)"
	@echo "make soak          long run with unplugs and hostile input (SOAK_SECONDS, default 600)"
	@echo "make install       release binary, unit, udev rule, /etc/workoutd/workoutd.yaml (PREFIX, DESTDIR)"

deps:
	@if [ "$$(id -u)" -eq 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	else \
		echo "make deps: run as root (or: sudo apt-get install -y $(APT_PACKAGES))"; \
	fi

build:
	$(SWIFT) build --build-tests

test: build test-swift test-udev test-shell test-systemd fuzz

test-swift:
	$(SWIFT) test --skip-build --skip $(UDEV_TESTS) --skip '$(HEAVY_TESTS)'
	$(SWIFT) test --skip-build --filter '$(HEAVY_TESTS)'

test-udev:
	WORKOUTD_REQUIRE_UMOCKDEV=1 umockdev-wrapper $(SWIFT) test --skip-build --filter $(UDEV_TESTS)

test-shell:
	bash Tests/shell/socat-seeds.sh "$$($(SWIFT) build --show-bin-path)/workoutd"

test-systemd:
	bash Tests/systemd/run.sh

fuzz:
	bash scripts/fuzz.sh $${FUZZ_SECONDS:-60}

demo: deps
	$(SWIFT) build --product workoutd
	@bash scripts/demo.sh "$$($(SWIFT) build --show-bin-path)/workoutd"

bench:
	bash scripts/bench.sh

soak:
	bash scripts/soak.sh

clean:
	rm -rf .build .build-release .build-fuzz .build-bench fuzz-out

include mk/install.mk

# workoutd — the commands a developer and CI use. `make help` lists them.

SWIFT      ?= swift
# umockdev's preload library redirects /dev and /sys for the whole process, so the libudev tests run
# in a process of their own under its wrapper, and every other test outside it.
UDEV_TESTS := DeviceDiscoveryTests
# The end-to-end and crash tests drive daemons hard (a gigabyte without a newline, kill -9 under load): they
# run after the rest rather than beside it, so their load does not starve the other tests' waits.
HEAVY_TESTS := EndToEndTests|DurabilityTests|ReplicationTests
# The one package list: `make deps` installs it, and so does CI (.ci/run).
APT_PACKAGES := make gcc socat libudev-dev umockdev libumockdev-dev libsystemd-dev libsqlite3-dev sqlite3 \
                systemd-container debootstrap valgrind python3 util-linux lld openssl \
                debhelper dpkg-dev fakeroot lintian man-db groff-base strace linux-perf \
                qemu-system-x86 qemu-system-arm qemu-utils mmdebstrap debian-archive-keyring e2fsprogs picocom tmux \
                postgresql pgbouncer chromium chromium-driver python3-selenium iproute2

.PHONY: help deps build lint format check-warnings check test test-swift test-udev test-shell test-clients test-systemd test-web web-screenshots test-vm test-vm-arm64 fuzz demo bench bench-check soak clean openapi

help:
	@echo "make deps          install the Debian packages the build and the tests need (root)"
	@echo "make demo          build workoutd and workoutctl, start workoutd on a socat pty pair, send the seed commands,"
	@echo "                   show the replies and how to run both commands"
	@echo "make lint          swift-format's lint (.swift-format) and the comment rules over the tree; make format rewrites"
	@echo "make check-warnings debug (with tests) and release builds; fails on any warning from our code"
	@echo "make check         the fast lane: lint, the debug build's warnings, unit tests and the daemon in process;"
	@echo "                   boots nothing (no VM, systemd, workoutd process or browser)"
	@echo "make test          warning check, then every test: Swift tests, libudev tests under umockdev, the socat and fsync-count shell tests,"
	@echo "                   the reference C client's relay test, the real-systemd test (root), a 60 s fuzz run and the VM test (amd64)"
	@echo "make test-clients  the reference C client (clients/c) built, its example wearable against workoutd through a"
	@echo "                   relay that drops replies and answers rate_limited; workoutd conformance passing it and"
	@echo "                   failing a broken wearable per rule"
	@echo "make test-web      the web page in headless chromium (Selenium) against workoutd on socat ptys;"
	@echo "                   screenshots in .build/web-screenshots/"
	@echo "make web-screenshots  the same, writing the page's pictures (docs/images/web-page*.png) for the docs"
	@echo "make openapi       regenerate Sources/WebAPI/Generated from Sources/WebAPI/openapi.yaml"
	@echo "make test-vm       the package from make deb in a QEMU Debian guest (real kernel, udev, systemd),"
	@echo "                   serving a USB CDC-ACM gadget on dummy_hcd; power cuts by SIGKILL (root)"
	@echo "make bench         release benchmarks, recorded in Benchmarks/Results; docs/benchmarks.md is generated from them"
	@echo "make bench-check   the benchmark parts that have floors (Benchmarks/Thresholds/*.json); fails on any miss"
	@echo "                   (BENCH_PARTS=\"idle startup\" for some of them)"
	@echo "make fuzz          fuzz for FUZZ_SECONDS (default 60), then the C client's reply parser for CLIENT_FUZZ_SECONDS (30)"
	@echo "make soak          long run with unplugs and hostile input (SOAK_SECONDS, default 600)"
	@echo "make soak SOAK=long   hours (SOAK_SECONDS=7200): replication with outages, reloads, per-hour drift"
	@echo "make install       release binaries, unit, udev rule, modules-load.d entry, man pages, bash completion,"
	@echo "                   /etc/workoutd/workoutd.yaml (PREFIX, DESTDIR); make uninstall removes them"
	@echo "make deb           the Debian package, dist/workoutd_<version>_<arch>.deb (debian/, debhelper)"
	@echo "make deb ARCH=arm64 the arm64 package, cross-built here (root; a cached build root, docs/operations.md)"
	@echo "make test-vm-arm64 the VM test with the arm64 package in a trixie arm64 guest (qemu-system-aarch64, TCG)"

deps:
	@if [ "$$(id -u)" -eq 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	else \
		echo "make deps: run as root (or: sudo apt-get install -y $(APT_PACKAGES))"; \
	fi

build:
	$(SWIFT) build --build-tests

lint:
	bash scripts/lint.sh

format:
	bash scripts/lint.sh format

# The debug build with tests happens in check-warnings (our modules compiled afresh, so their warnings are seen).
check-warnings:
	SWIFT=$(SWIFT) CHECK_WARNINGS_RELEASE_BUILD="$(RELEASE_BUILD)" bash scripts/check-warnings.sh

# The fast lane for the edit-test loop: lint, then the debug build with tests (its warnings fail it), then the Swift
# tests outside the umockdev and heavy targets with WORKOUTD_TEST_LANE=check, which the suites that start a workoutd
# process (or a database, or a VM) honour by not running; tests of the daemon in process run.
check: lint
	SWIFT=$(SWIFT) CHECK_WARNINGS_CONFIGURATIONS=debug bash scripts/check-warnings.sh
	WORKOUTD_TEST_LANE=check $(SWIFT) test --skip-build --skip $(UDEV_TESTS) --skip '$(HEAVY_TESTS)'

# test-vm-arm64 last: on a machine that has its build root, build directory and guest image cached (docs/operations.md,
# "How the arm64 package is built") it adds minutes; a cold machine makes them first, which takes far longer.
test: lint check-warnings test-swift test-udev test-shell test-clients test-web test-systemd fuzz test-vm test-vm-arm64

test-swift:
	$(SWIFT) test --skip-build --skip $(UDEV_TESTS) --skip '$(HEAVY_TESTS)'
	$(SWIFT) test --skip-build --filter '$(HEAVY_TESTS)'

test-udev:
	WORKOUTD_REQUIRE_UMOCKDEV=1 umockdev-wrapper $(SWIFT) test --skip-build --filter $(UDEV_TESTS)

test-shell:
	bash Tests/shell/socat-seeds.sh "$$($(SWIFT) build --show-bin-path)/workoutd"
	python3 Tests/shell/fsync-count.py "$$($(SWIFT) build --show-bin-path)/workoutd"
	bash Tests/shell/picocom-session.sh "$$($(SWIFT) build --show-bin-path)/workoutd"
	python3 Tests/shell/man-pages.py "$$($(SWIFT) build --show-bin-path)"

# The reference C client (clients/c): built with its warnings, its lines read back as JSON, then its example
# wearable against the daemon through a relay that drops replies or answers rate_limited, then `workoutd
# conformance` grading it (a pass) and Python wearables that each break one rule (a fail naming it).
test-clients:
	$(MAKE) -C clients/c
	python3 Tests/clients/builders.py clients/c/build/print_lines
	python3 Tests/clients/wearable-relay.py "$$($(SWIFT) build --show-bin-path)/workoutd" clients/c/build/wearable
	python3 Tests/clients/conformance.py "$$($(SWIFT) build --show-bin-path)/workoutd" clients/c/build/wearable

test-systemd:
	bash Tests/systemd/run.sh

# The browser test: chromium + chromium-driver + python3-selenium (Debian packages).
test-web:
	bash Tests/web/run.sh "$$($(SWIFT) build --show-bin-path)/workoutd"

# The same run, writing the desktop and phone pictures the README and docs/web.md show into docs/images/.
web-screenshots:
	WEB_IMAGES=docs/images bash Tests/web/run.sh "$$($(SWIFT) build --show-bin-path)/workoutd"

# The generated API sources are checked in; this rebuilds them after a change to the OpenAPI document.
openapi:
	sh scripts/openapi/generate.sh

# The image is built once per scripts/vm-image.sh content and cached in /var/cache/workoutd-vm, and so is the
# previous release's package its upgrade phase starts from (scripts/previous-release.sh, keyed by its commit).
test-vm: deb
	bash Tests/vm/run.sh dist/workoutd_$(WORKOUTD_VERSION)_amd64.deb "$$(bash scripts/previous-release.sh)"

# The same test on an emulated arm64 hub: the arm64 package (cross-built) in a trixie arm64 guest.
test-vm-arm64:
	$(MAKE) deb ARCH=arm64
	bash Tests/vm/run.sh dist/workoutd_$(WORKOUTD_VERSION)_arm64.deb

# Then the reference C client's reply parser (clients/c), for CLIENT_FUZZ_SECONDS (default 30).
fuzz:
	bash scripts/fuzz.sh $${FUZZ_SECONDS:-60}
	$(MAKE) -C clients/c fuzz FUZZ_SECONDS=$${CLIENT_FUZZ_SECONDS:-30}

# Both commands stay in the debug build directory; the demo ends by saying how to run them.
demo: deps
	$(SWIFT) build --product workoutd
	$(SWIFT) build --product workoutctl
	@bash scripts/demo.sh "$$($(SWIFT) build --show-bin-path)/workoutd"

bench:
	bash Benchmarks/bench.sh

# The parts with floors (one thresholds file each), then every floor of those parts against what they measured.
BENCH_PARTS ?= $(shell python3 Benchmarks/bench_floors.py parts)
bench-check:
	bash Benchmarks/bench.sh $(BENCH_PARTS)
	python3 Benchmarks/bench_floors.py check $(BENCH_PARTS)

soak:
	bash Benchmarks/soak.sh

clean:
	rm -rf .build .build-release .build-fuzz .build-bench .build-soak fuzz-out

include mk/install.mk

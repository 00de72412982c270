# The arm64 package, cross-built on an amd64 machine: `make deb ARCH=arm64` (root; network the first time).
# Included by mk/install.mk; without ARCH=arm64 (or on an arm64 machine, which builds natively) it changes
# nothing.
#
# /opt/swift has x86_64 runtime libraries only, so the arm64 binary is built by Debian's swiftlang (sid) against
# a Debian trixie arm64 sysroot, in a root that scripts/arm64-toolchain.sh makes once and caches
# (WORKOUTD_ARM64_CACHE, default /var/cache/workoutd-arm64), keyed on that script and the package versions.
# Every step that needs the root runs through scripts/arm64-run.sh. docs/operations.md: "How the arm64 package is built".

ifeq ($(ARCH),arm64)
ifneq ($(shell uname -m),aarch64)

# Made (or found) once per make run; sub-makes (dpkg-buildpackage, debian/rules) inherit it.
ifeq ($(WORKOUTD_ARM64_ROOT),)
export WORKOUTD_ARM64_ROOT := $(shell bash scripts/arm64-toolchain.sh)
ifeq ($(WORKOUTD_ARM64_ROOT),)
$(error scripts/arm64-toolchain.sh made no arm64 build root (above))
endif
endif

ARM64_RUN         := bash $(CURDIR)/scripts/arm64-run.sh
ARM64_SDK         := /opt/workoutd-arm64.artifactbundle
ARM64_SYSROOT     := $(ARM64_SDK)/trixie-arm64/sysroot
# The build directory lives beside the root it was built with, outside the clone, so a fresh clone (CI's) finds
# the dependencies built: only our own modules compile again (scripts/arm64-run.sh mounts it at the same path).
RELEASE_SCRATCH   := $(WORKOUTD_ARM64_ROOT).scratch
# The system-library modules (libudev, libsystemd) find their .pc files in the sysroot, paths prefixed with it.
ARM64_PKG_CONFIG  := PKG_CONFIG_SYSROOT_DIR=$(ARM64_SYSROOT) \
                     PKG_CONFIG_PATH=$(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu/pkgconfig:$(ARM64_SYSROOT)/usr/share/pkgconfig
# lld, not gold, links the target (the SDK's toolset.json says so). Without --icf=safe: lld ignores the address
# significance tables of Debian's runtime archives (one warning per object) and folds next to nothing
# (docs/decisions/0004-arm64-cross-build.md).
ARM64_LINK        := -Xlinker --no-export-dynamic
RELEASE_BUILD     := $(ARM64_RUN) env $(ARM64_PKG_CONFIG) swift build -c release --static-swift-stdlib $(ARM64_LINK) \
                     --swift-sdks-path /opt --swift-sdk trixie-arm64 --scratch-path $(RELEASE_SCRATCH)
GENERATED         := $(RELEASE_SCRATCH)/generated
# ldd cannot read an AArch64 program here: the dynamic section's NEEDED entries, one a line.
NEEDED_LIBS        = sh -c 'readelf -d "$$0" | sed -n "s/.*Shared library: \[\(.*\)\]/\1/p"'
# The man page and completion generators run the arm64 binary under qemu-user with the sysroot's libraries;
# -0 sets argv[0], the name that picks the command.
DOC_WORKOUTD       = $(GENERATED)/qemu/workoutd
DOC_WORKOUTCTL     = $(GENERATED)/qemu/workoutctl
ARM64_BIN         := $(RELEASE_SCRATCH)/aarch64-unknown-linux-gnu/release/workoutd
RELEASE_BINARY_EXTRA = @readelf -h $(ARM64_BIN) | grep -q 'Machine: *AArch64' \
	|| { echo "release-binary: $(ARM64_BIN) is not an AArch64 program" >&2; exit 1; }; \
	mkdir -p $(GENERATED)/qemu; for name in workoutd workoutctl; do \
		printf '\043!/bin/sh\nexec %s qemu-aarch64 -L %s -0 %s %s "$$@"\n' \
			"$(ARM64_RUN)" $(ARM64_SYSROOT) $$name $(ARM64_BIN) > $(GENERATED)/qemu/$$name; \
		chmod +x $(GENERATED)/qemu/$$name; \
	done
DEB_ARCH_FLAGS    := -aarm64 --buildinfo-file=dist/workoutd-arm64.buildinfo --changes-file=dist/workoutd-arm64.changes

endif
endif

# Installing workoutd as a systemd service. Included by the top-level Makefile.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=]   the release binary workoutd (Swift stdlib linked
#                                                   statically) and workoutctl, a symlink to it (one binary
#                                                   serves both commands), systemd unit, udev rule,
#                                                   modules-load.d entry, sysusers.d groups (created with
#                                                   systemd-sysusers), man pages, bash completion,
#                                                   default configuration
#   make deb                                        the same as a Debian package: dist/workoutd_<version>_<arch>.deb
#   make deb ARCH=arm64                             the arm64 package, cross-built on amd64 (mk/arm64.mk)
#   make uninstall [PREFIX=/usr/local] [DESTDIR=]   removes them (an edited configuration stays)
#
# The configuration lives in /etc/workoutd whatever PREFIX is: the unit's ConfigurationDirectory= is there.

PREFIX          ?= /usr/local
DESTDIR         ?=
BINDIR          ?= $(PREFIX)/bin
SYSTEMDUNITDIR  ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR    ?= $(PREFIX)/lib/udev/rules.d
MODULESLOADDIR  ?= $(PREFIX)/lib/modules-load.d
# systemd-sysusers reads /usr/local/lib/sysusers.d too.
SYSUSERSDIR     ?= $(PREFIX)/lib/sysusers.d
MANDIR          ?= $(PREFIX)/share/man
BASHCOMPDIR     ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR      ?= /etc
# A scratch path of its own, so a release build never disturbs a debug build in progress.
RELEASE_SCRATCH ?= $(CURDIR)/.build-release

WORKOUTD_UNIT     := systemd/workoutd.service
WORKOUTD_CONFIG   := Config/workoutd.yaml
# The udev rule that tags the wearable (sets WORKOUTD_DEVICE=1 and the device group).
WORKOUTD_RULES    := $(wildcard udev/*.rules systemd/*.rules)
# The tty drivers the unit's DeviceAllow=char-ttyACM/char-ttyUSB name, loaded at boot (see the file).
WORKOUTD_MODULES  := systemd/workoutd-modules.conf
# The static groups: workoutd (control socket readers) and workoutd-wearable (the wearable's tty).
WORKOUTD_SYSUSERS := systemd/workoutd-sysusers.conf
# The toolchain's static-stdlib link flags export every symbol of our own code (-export-dynamic): megabytes of
# dynamic symbol table nothing looks up (no plug-ins are loaded). Identical code folding (gold --icf=safe) merges
# the copies generics leave. docs/benchmarks.md (part footprint) says where the remaining megabytes are.
RELEASE_LINK      := -Xlinker --no-export-dynamic -Xlinker --icf=safe
RELEASE_BUILD     := swift build -c release --static-swift-stdlib $(RELEASE_LINK) --scratch-path $(RELEASE_SCRATCH)
# The shared libraries a binary needs (release-binary refuses the Swift runtime among them).
NEEDED_LIBS        = ldd
# How the man pages and completions run the two commands.
DOC_WORKOUTD       = "$(RELEASE_BIN)/workoutd"
DOC_WORKOUTCTL     = $(GENERATED)/workoutctl
DEB_ARCH_FLAGS    := --buildinfo-file=dist/workoutd.buildinfo --changes-file=dist/workoutd.changes
include mk/arm64.mk
RELEASE_BIN        = $$($(RELEASE_BUILD) --show-bin-path)
# Man pages and bash completion, generated from the commands' argument-parser definitions.
GENERATED         := $(RELEASE_SCRATCH)/generated
# The version is set in one place, WorkoutdVersion.current; the package's version, the top entry of
# debian/changelog, must equal it (check-version).
WORKOUTD_VERSION  := $(shell sed -n 's/.*static let current = "\(.*\)"/\1/p' Sources/WorkoutProtocol/WorkoutdVersion.swift)
CHANGELOG_VERSION  = $(shell head -n 1 debian/changelog | cut -d ' ' -f 2 | tr -d '()')
# The unit in the repository names the default location; a different BINDIR is substituted on install.
UNIT_DEFAULT_EXEC := /usr/local/bin/workoutd

.PHONY: release-binary generated-docs install install-files uninstall deb check-version print-version

# Builds the release binary and refuses one that would need the Swift toolchain's shared libraries.
# workoutd runs workoutctl's commands when invoked under that name (Sources/workoutd/MultiCallEntry.swift):
# one copy of the statically linked runtime instead of two. $(GENERATED)/workoutctl is that symlink, for
# the man page and completion generated below.
release-binary:
	$(RELEASE_BUILD) --product workoutd
	@bin="$(RELEASE_BIN)/workoutd"; \
	if $(NEEDED_LIBS) "$$bin" | grep -E 'libswift|libFoundation|libdispatch|not found'; then \
		echo "release-binary: $$bin links the Swift runtime dynamically (above); expected --static-swift-stdlib" >&2; \
		exit 1; \
	fi; \
	echo "release-binary: $$bin (shared libraries: $$($(NEEDED_LIBS) "$$bin" | awk '{print $$1}' | tr '\n' ' '))"; \
	mkdir -p $(GENERATED) && ln -sfn "$$bin" $(GENERATED)/workoutctl
	$(RELEASE_BINARY_EXTRA)

# The manuals workoutd(8), workoutctl(1) and workoutd.yaml(5): scripts/man-pages.py writes them from each
# command tree's own description (every subcommand and option) and from the table of configuration keys the
# check reads; bash completion from argument-parser's own generator.
generated-docs: release-binary
	@mkdir -p $(GENERATED)
	python3 scripts/man-pages.py $(GENERATED) $(DOC_WORKOUTD) $(DOC_WORKOUTCTL) $(WORKOUTD_VERSION)
	@# A completion script is sourced, not run: no #! line (lintian: bash-completion-with-hashbang).
	$(DOC_WORKOUTD) --generate-completion-script bash | sed '1{/^#!/d}' > $(GENERATED)/workoutd.bash
	$(DOC_WORKOUTCTL) --generate-completion-script bash | sed '1{/^#!/d}' > $(GENERATED)/workoutctl.bash

# The groups are created here (in DESTDIR's /etc when set), before udev and the unit name them; a package
# creates them from its postinst instead (install-files only installs the sysusers.d file).
# The replication password's credential file (the unit's LoadCredential=) is made here too, empty and root's
# alone, only where there is none: it holds a secret, so it is no package file (a package's postinst makes it).
install: release-binary generated-docs install-files
	@[ -e $(DESTDIR)$(SYSCONFDIR)/workoutd/postgres-password ] || \
		install -m 0600 /dev/null $(DESTDIR)$(SYSCONFDIR)/workoutd/postgres-password
	@if command -v systemd-sysusers >/dev/null 2>&1; then \
		echo "systemd-sysusers --root=$(or $(DESTDIR),/) $(SYSUSERSDIR)/workoutd.conf"; \
		systemd-sysusers --root=$(or $(DESTDIR),/) $(DESTDIR)$(SYSUSERSDIR)/workoutd.conf; \
	else \
		echo "install: no systemd-sysusers; create the groups workoutd and workoutd-wearable (groupadd --system)"; \
	fi
	@[ -n "$(DESTDIR)" ] || echo "install: now run: modprobe -a cdc_acm usbserial && systemctl daemon-reload && udevadm control --reload && udevadm trigger -s tty && systemctl enable --now workoutd"

# Copies what release-binary and generated-docs built; `make deb` (debian/rules) calls it with DESTDIR.
install-files:
	@test -f $(WORKOUTD_CONFIG) || { echo "install: $(WORKOUTD_CONFIG) is missing" >&2; exit 1; }
	@test -n "$(WORKOUTD_RULES)" || { echo "install: no udev rule (udev/*.rules or systemd/*.rules)" >&2; exit 1; }
	install -D -m 0755 "$(RELEASE_BIN)/workoutd" $(DESTDIR)$(BINDIR)/workoutd
	ln -sfn workoutd $(DESTDIR)$(BINDIR)/workoutctl
	install -D -m 0644 $(GENERATED)/workoutd.8 $(DESTDIR)$(MANDIR)/man8/workoutd.8
	install -D -m 0644 $(GENERATED)/workoutctl.1 $(DESTDIR)$(MANDIR)/man1/workoutctl.1
	install -D -m 0644 $(GENERATED)/workoutd.yaml.5 $(DESTDIR)$(MANDIR)/man5/workoutd.yaml.5
	install -D -m 0644 $(GENERATED)/workoutd.bash $(DESTDIR)$(BASHCOMPDIR)/workoutd
	install -D -m 0644 $(GENERATED)/workoutctl.bash $(DESTDIR)$(BASHCOMPDIR)/workoutctl
	install -D -m 0644 $(WORKOUTD_MODULES) $(DESTDIR)$(MODULESLOADDIR)/workoutd.conf
	install -D -m 0644 $(WORKOUTD_SYSUSERS) $(DESTDIR)$(SYSUSERSDIR)/workoutd.conf
	install -d -m 0755 $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|$(UNIT_DEFAULT_EXEC)|$(BINDIR)/workoutd|g' $(WORKOUTD_UNIT) > $(DESTDIR)$(SYSTEMDUNITDIR)/workoutd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/workoutd.service
	install -d -m 0755 $(DESTDIR)$(UDEVRULESDIR)
	install -m 0644 $(WORKOUTD_RULES) $(DESTDIR)$(UDEVRULESDIR)/
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/workoutd
	@# Never overwrite a configuration the administrator may have edited; ship the new default beside it.
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml ]; then \
		if cmp -s $(WORKOUTD_CONFIG) $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml; then \
			echo "install: $(SYSCONFDIR)/workoutd/workoutd.yaml is already the default"; \
		else \
			install -m 0644 $(WORKOUTD_CONFIG) $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml.default; \
			echo "install: kept your $(SYSCONFDIR)/workoutd/workoutd.yaml; the new default is workoutd.yaml.default"; \
		fi; \
	else \
		echo "install -m 0644 $(WORKOUTD_CONFIG) $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml"; \
		install -m 0644 $(WORKOUTD_CONFIG) $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/workoutd $(DESTDIR)$(BINDIR)/workoutctl
	@# man1/workoutd.1 is where versions before the section-8 manual put it.
	rm -f $(DESTDIR)$(MANDIR)/man8/workoutd.8 $(DESTDIR)$(MANDIR)/man1/workoutctl.1 $(DESTDIR)$(MANDIR)/man5/workoutd.yaml.5 \
		$(DESTDIR)$(MANDIR)/man1/workoutd.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/workoutd $(DESTDIR)$(BASHCOMPDIR)/workoutctl
	rm -f $(DESTDIR)$(MODULESLOADDIR)/workoutd.conf
	@# The groups stay (as with any package's system groups): files and memberships may still name them.
	rm -f $(DESTDIR)$(SYSUSERSDIR)/workoutd.conf
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/workoutd.service
	rm -f $(addprefix $(DESTDIR)$(UDEVRULESDIR)/,$(notdir $(WORKOUTD_RULES)))
	rm -f $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml.default
	@# An unedited configuration goes; an edited one is the administrator's and stays.
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml ]; then \
		if cmp -s $(WORKOUTD_CONFIG) $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml; then \
			rm -f $(DESTDIR)$(SYSCONFDIR)/workoutd/workoutd.yaml; \
		else \
			echo "uninstall: kept your edited $(SYSCONFDIR)/workoutd/workoutd.yaml"; \
		fi; \
	fi
	@rmdir $(DESTDIR)$(SYSCONFDIR)/workoutd 2>/dev/null || true
	@[ -n "$(DESTDIR)" ] || echo "uninstall: now run: systemctl daemon-reload && udevadm control --reload"

# The Debian package (debian/): dpkg-buildpackage runs debian/rules, which builds through the targets
# above into the same release scratch path; the .deb lands in dist/.
deb: check-version
	@mkdir -p dist
	@# What an earlier run left: dh skips the steps its logs record, and would package stale files.
	rm -rf debian/workoutd debian/.debhelper debian/files debian/*.substvars debian/*.debhelper \
		debian/*.debhelper.log debian/debhelper-build-stamp
	dpkg-buildpackage -us -uc -b --no-pre-clean --buildinfo-option=-udist --changes-option=-udist \
		$(DEB_ARCH_FLAGS)
	@ls dist/*.deb

# A release sets WorkoutdVersion.current and adds the matching entry to debian/changelog (and a section to
# CHANGELOG.md).
check-version:
	@if [ "$(CHANGELOG_VERSION)" != "$(WORKOUTD_VERSION)" ]; then \
		echo "check-version: WorkoutdVersion.current says $(WORKOUTD_VERSION) but debian/changelog's top entry is" \
			"$(CHANGELOG_VERSION); add a debian/changelog entry for $(WORKOUTD_VERSION) (dch -v $(WORKOUTD_VERSION))" >&2; \
		exit 1; \
	fi
	@echo "check-version: $(WORKOUTD_VERSION) in WorkoutdVersion.current and debian/changelog"

print-version:
	@echo $(WORKOUTD_VERSION)

# Installing workoutd as a systemd service. Included by the top-level Makefile.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=]   release binary (Swift stdlib linked statically),
#                                                   systemd unit, udev rule, default configuration
#   make uninstall [PREFIX=/usr/local] [DESTDIR=]   removes them (an edited configuration stays)
#
# The configuration lives in /etc/workoutd whatever PREFIX is: the unit's ConfigurationDirectory= is there.

PREFIX          ?= /usr/local
DESTDIR         ?=
BINDIR          ?= $(PREFIX)/bin
SYSTEMDUNITDIR  ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR    ?= $(PREFIX)/lib/udev/rules.d
SYSCONFDIR      ?= /etc
# A scratch path of its own, so a release build never disturbs a debug build in progress.
RELEASE_SCRATCH ?= $(CURDIR)/.build-release

WORKOUTD_UNIT     := systemd/workoutd.service
WORKOUTD_CONFIG   := Config/workoutd.yaml
# The udev rule that tags the wearable (sets WORKOUTD_DEVICE=1 and the device group).
WORKOUTD_RULES    := $(wildcard udev/*.rules systemd/*.rules)
RELEASE_BUILD     := swift build -c release --static-swift-stdlib --scratch-path $(RELEASE_SCRATCH) --product workoutd
# The unit in the repository names the default location; a different BINDIR is substituted on install.
UNIT_DEFAULT_EXEC := /usr/local/bin/workoutd

.PHONY: release-binary install uninstall

# Builds the release binary and refuses one that would need the Swift toolchain's shared libraries.
release-binary:
	$(RELEASE_BUILD)
	@bin="$$($(RELEASE_BUILD) --show-bin-path)/workoutd"; \
	if ldd "$$bin" | grep -E 'libswift|libFoundation|libdispatch|not found'; then \
		echo "release-binary: $$bin links the Swift runtime dynamically (above); expected --static-swift-stdlib" >&2; \
		exit 1; \
	fi; \
	echo "release-binary: $$bin (shared libraries: $$(ldd "$$bin" | awk '{print $$1}' | tr '\n' ' '))"

install: release-binary
	@test -f $(WORKOUTD_CONFIG) || { echo "install: $(WORKOUTD_CONFIG) is missing" >&2; exit 1; }
	@test -n "$(WORKOUTD_RULES)" || { echo "install: no udev rule (udev/*.rules or systemd/*.rules)" >&2; exit 1; }
	install -D -m 0755 "$$($(RELEASE_BUILD) --show-bin-path)/workoutd" $(DESTDIR)$(BINDIR)/workoutd
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
	@[ -n "$(DESTDIR)" ] || echo "install: now run: systemctl daemon-reload && udevadm control --reload && systemctl enable --now workoutd"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/workoutd
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

// libsystemd's service-manager notification API (sd_notify, sd_watchdog_enabled); Debian: libsystemd-dev.
#include <systemd/sd-daemon.h>

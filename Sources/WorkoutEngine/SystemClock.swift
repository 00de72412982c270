import CPosixTTY
import Foundation
import Synchronization
import WorkoutProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The system's clocks as a ``ClockReading``.
///
/// Synchronised means: `/run/systemd/timesync/synchronized` exists (systemd-timesyncd touches it at its first
/// synchronisation), or `adjtimex(2)` reports the kernel's clock synchronised (chrony, ntpd). Under the packaged
/// unit `ProtectClock=yes` refuses `adjtimex` (EPERM), so there only the file says it. Once synchronised the
/// answer is kept: a later loss of sync does not make the wall clock step, and checking costs syscalls that
/// every batch would otherwise pay. Before that, it is checked at most once a second (by the boot clock, read
/// through the vDSO).
final class SystemClock: Sendable {
    static let synchronizedFlagPath = "/run/systemd/timesync/synchronized"
    static let bootIDPath = "/proc/sys/kernel/random/boot_id"
    /// How often an unsynchronised clock is checked again, in boot-clock seconds.
    static let recheckInterval = 1.0

    private let bootID: String
    private let synchronized: Atomic<Bool>
    /// Boot-clock milliseconds of the last check (while unsynchronised).
    private let lastCheck = Atomic<Int64>(Int64.min)

    init(assumeSynchronized: Bool) {
        bootID =
            (try? String(contentsOfFile: Self.bootIDPath, encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
        synchronized = Atomic(assumeSynchronized)
    }

    func read() -> ClockReading {
        let boot = Self.bootSeconds()
        let wall = Date()
        return ClockReading(
            wall: wall,
            boot: BootInstant(bootID: bootID, seconds: boot),
            synchronized: isSynchronized(at: boot)
        )
    }

    private func isSynchronized(at boot: Double) -> Bool {
        if synchronized.load(ordering: .relaxed) { return true }
        let now = Int64(boot * 1000)
        let last = lastCheck.load(ordering: .relaxed)
        guard last == Int64.min || now - last >= Int64(Self.recheckInterval * 1000) else { return false }
        lastCheck.store(now, ordering: .relaxed)
        guard Self.kernelReportsSynchronized() else { return false }
        synchronized.store(true, ordering: .relaxed)
        return true
    }

    static func kernelReportsSynchronized() -> Bool {
        if access(synchronizedFlagPath, F_OK) == 0 { return true }
        // -1 (EPERM under ProtectClock): unknown, so not synchronised.
        return wd_kernel_clock_synchronized() == 1
    }

    /// `CLOCK_BOOTTIME` in seconds.
    static func bootSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

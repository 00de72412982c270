import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// The wearable's end of the pty (the master, non-blocking), driven with plain read/write/poll.
///
/// Plain calls keep the driver's own cost small beside what it measures.
struct MasterSide: Sendable {
    let fd: CInt

    /// Writes as much of `bytes` as the line takes now, waiting (poll) only when it takes nothing.
    func writeSome(_ bytes: UnsafeRawBufferPointer, until deadline: ContinuousClock.Instant) throws(TestingError) -> Int
    {
        while true {
            let n = Glibc.write(fd, bytes.baseAddress, bytes.count)
            if n >= 0 { return n }
            guard errno == EAGAIN || errno == EINTR else {
                throw TestingError("write to the pty failed: \(String(cString: strerror(errno)))")
            }
            try wait(for: POLLOUT, until: deadline)
        }
    }

    /// Reads what is there (at least one byte), waiting (poll) when nothing is.
    func readSome(
        into buffer: UnsafeMutableRawBufferPointer,
        until deadline: ContinuousClock.Instant
    ) throws(TestingError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return n }
            if n == 0 { throw TestingError("end of file on the pty") }
            guard errno == EAGAIN || errno == EINTR else {
                throw TestingError("read from the pty failed: \(String(cString: strerror(errno)))")
            }
            try wait(for: POLLIN, until: deadline)
        }
    }

    private func wait(for events: Int32, until deadline: ContinuousClock.Instant) throws(TestingError) {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { throw TestingError("timed out waiting for the program under test") }
        var descriptor = pollfd(fd: fd, events: Int16(events), revents: 0)
        let milliseconds = Int32(min(remaining.inMilliseconds + 1, 60_000))
        if poll(&descriptor, 1, milliseconds) < 0 && errno != EINTR {
            throw TestingError("poll failed: \(String(cString: strerror(errno)))")
        }
        // POLLHUP: the program closed the device (it died); the next read or write reports it.
        if descriptor.revents & Int16(POLLHUP) != 0 && descriptor.revents & Int16(events) == 0 {
            throw TestingError("the program under test closed the device")
        }
    }
}

/// Counts newlines in raw bytes: the number of complete reply lines.
func countNewlines(_ bytes: UnsafeRawBufferPointer) -> Int {
    var count = 0
    var position = bytes.baseAddress
    var remaining = bytes.count
    while remaining > 0, let base = position, let found = memchr(base, 0x0A, remaining) {
        count += 1
        let consumed = base.distance(to: UnsafeRawPointer(found)) + 1
        position = base + consumed
        remaining -= consumed
    }
    return count
}

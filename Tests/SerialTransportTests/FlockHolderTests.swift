import Foundation
import Testing

@testable import SerialTransport

/// Naming who holds a tty: the pid comes from the kernel's `/proc/locks`, for granted flocks only.
@Suite struct FlockHolderTests {
    @Test func aLineOfProcLocksNamesTheHolderOfThatFileOnly() {
        let line = "3: FLOCK  ADVISORY  WRITE 4242 00:19:7 0 EOF\n"
        #expect(FlockHolder.holder(in: line, of: "00:19:7") == 4242)
        #expect(FlockHolder.holder(in: line, of: "00:19:70") == nil, "another inode")
        #expect(
            FlockHolder.holder(in: "3: -> FLOCK  ADVISORY  WRITE 4243 00:19:7 0 EOF\n", of: "00:19:7") == nil,
            "a waiter holds nothing"
        )
        #expect(
            FlockHolder.holder(in: "4: POSIX  ADVISORY  WRITE 4244 00:19:7 0 EOF\n", of: "00:19:7") == nil,
            "not a flock"
        )
        #expect(FlockHolder.fileID(device: 0x0803, inode: 12) == "08:03:12")
        #expect(FlockHolder.fileID(device: UInt64(259) << 8 | 1, inode: 5) == "103:01:5")
    }

    @Test func theKernelNamesThisProcessAsTheHolderOfItsFlock() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("flock-\(UUID().uuidString)").path
        let holder = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(holder >= 0)
        defer {
            close(holder)
            unlink(path)
        }
        let other = open(path, O_RDWR | O_CLOEXEC)
        try #require(other >= 0)
        defer { close(other) }
        #expect(FlockHolder.pid(holding: other) == nil, "nobody holds it yet")
        try #require(flock(holder, LOCK_EX | LOCK_NB) == 0)
        #expect(flock(other, LOCK_EX | LOCK_NB) != 0)
        #expect(FlockHolder.pid(holding: other) == getpid())
    }
}

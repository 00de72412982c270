// workoutd's session behind an epoll loop of its own, for `make bench` (parts cpu, pty and many-devices): the protocol
// without NIO.
//
// Opens the device as workoutd does (`SerialPort.open`) and serves it from one thread that waits in `epoll_wait`,
// reads, frames and decodes the read's lines (`LineFrameDecoder`, `CommandLineDecoder`), answers them on the engine's
// session in place (the session's executor is this loop), encodes the replies (`ReplyEncoder`), writes them and
// announces the batch. The store is the in-memory one, or with a state directory workoutd's SQLite store, which commits
// each read's lines in place, as the daemon does for a device in single flight. Nothing else of the daemon runs: no
// metrics, no control socket, no observers, no share delivery. Counted beside the C echoes and the daemon, it is what a
// device path without NIO's channel would cost: the daemon's distance from it is the event loop's and the daemon's own,
// its distance from the C echo (behind epoll, or durable) is the protocol's and the store's.
//
// Run: SessionBehindEpoll /dev/pts/N [STATE_DIR]    Exits when the other end of the pty closes.
import CEpoll
import Foundation
import NIOCore
import SerialTransport
import Synchronization
import WorkoutEngine
import WorkoutProtocol
import WorkoutStorage

#if canImport(Glibc)
import Glibc
#endif

/// One thread waiting in `epoll_wait` for the device and for jobs.
///
/// It is also the executor of the session it serves.
final class EpollLoop: SerialExecutor, @unchecked Sendable {
    private let epoll: CInt
    /// Written to when a job is enqueued from another thread, so the loop wakes for it.
    private let wake: CInt
    private let jobs = Mutex<[UnownedJob]>([])
    /// The loop's thread, set before it serves anything.
    private let thread = Mutex<pthread_t?>(nil)

    init() {
        epoll = epoll_create1(CInt(EPOLL_CLOEXEC))
        wake = eventfd(0, CInt(EFD_CLOEXEC | EFD_NONBLOCK))
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wake))
        epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        var one: UInt64 = 1
        _ = write(wake, &one, MemoryLayout<UInt64>.size)
    }

    func checkIsolated() {
        precondition(isLoopThread, "not on the epoll loop's thread")
    }

    func isIsolatingCurrentContext() -> Bool? { isLoopThread }

    private var isLoopThread: Bool {
        thread.withLock { loop in loop.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Starts waiting for `descriptor`, which ``run(device:session:)`` serves.
    func watch(_ descriptor: CInt) {
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: descriptor))
        epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event)
    }

    /// Runs the session's jobs and serves `descriptor` on the calling thread.
    ///
    /// The device is served once watched, until the other end closes.
    func run(device descriptor: CInt, session: DeviceSession) -> Never {
        thread.withLock { $0 = pthread_self() }
        var device = DeviceLines(descriptor: descriptor)
        var ready = [epoll_event](repeating: epoll_event(), count: 8)
        while true {
            let count = epoll_wait(epoll, &ready, CInt(ready.count), -1)
            guard count >= 0 else {
                if errno == EINTR { continue }
                exit(1)
            }
            for index in 0..<Int(count) {
                if ready[index].data.fd == wake {
                    runJobs()
                } else if !device.serve(session) {
                    exit(0)
                }
            }
        }
    }

    private func runJobs() {
        var count: UInt64 = 0
        _ = read(wake, &count, MemoryLayout<UInt64>.size)
        let pending = jobs.withLock { jobs in
            defer { jobs.removeAll(keepingCapacity: true) }
            return jobs
        }
        for job in pending { job.runSynchronously(on: asUnownedSerialExecutor()) }
    }
}

/// One device's read, framing, decoding and writing.
///
/// The parts of workoutd's pipeline, without a channel.
struct DeviceLines {
    let descriptor: CInt
    private var input = ByteBufferAllocator().buffer(capacity: 4096)
    private var framer = LineFrameDecoder(maximumLineLength: PipelineOptions.defaultMaximumLineLength)
    private let decoder = CommandLineDecoder()
    private let encoder = ReplyEncoder()
    private var lines: [DecodedLine] = []
    private var output: [UInt8] = []

    init(descriptor: CInt) {
        self.descriptor = descriptor
    }

    /// Reads what the device sent and answers its lines; false once the device is gone.
    mutating func serve(_ session: DeviceSession) -> Bool {
        let descriptor = descriptor
        let received = input.writeWithUnsafeMutableBytes(minimumWritableBytes: 4096) { buffer in
            max(read(descriptor, buffer.baseAddress, buffer.count), 0)
        }
        if received == 0 { return errno == EAGAIN || errno == EINTR }
        lines.removeAll(keepingCapacity: true)
        frames: while true {
            switch framer.step(&input) {
            case .frame(.line(let line, let ending)):
                var decoded = line.withUnsafeReadableBytes { decoder.decode($0) }
                decoded.lineEnding = ending
                lines.append(decoded)
            case .frame(.tooLong(let ending)):
                lines.append(
                    DecodedLine(
                        id: nil,
                        command: .failure(.lineTooLong(limit: PipelineOptions.defaultMaximumLineLength)),
                        lineEnding: ending
                    )
                )
            case .skipped: continue
            case .needMoreData: break frames
            }
        }
        input.discardReadBytes()
        guard !lines.isEmpty else { return true }
        // Committed in place whether or not more input waits: the loop serves one device, so holding it through the
        // sync delays nothing else, and a pipelined read's lines are one group commit. In single flight no input
        // waits, and this is the daemon's path; pipelined, the daemon queues the commit instead and reads on.
        guard let replies = session.answerImmediatelyInPlace(lines, inputWaiting: false) else {
            FileHandle.standardError.write(Data("SessionBehindEpoll: the store did not answer at once\n".utf8))
            exit(1)
        }
        output.removeAll(keepingCapacity: true)
        for reply in replies { encoder.appendLine(reply, to: &output) }
        guard writeAll() else { return false }
        session.announceAnsweredInPlace()
        return true
    }

    /// Writes the replies, waiting for the device when it takes them only in part.
    private func writeAll() -> Bool {
        output.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EAGAIN {
                    var wait = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&wait, 1, -1)
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }
}

guard (2...3).contains(CommandLine.arguments.count) else {
    FileHandle.standardError.write(Data("usage: SessionBehindEpoll DEVICE [STATE_DIR]\n".utf8))
    exit(64)
}
let loop = EpollLoop()
do {
    let descriptor = try SerialPort.open(path: CommandLine.arguments[1], baud: 115_200)
    let store: any SessionStore =
        if CommandLine.arguments.count == 3 {
            try SQLiteWorkoutStore(stateDirectory: CommandLine.arguments[2])
        } else {
            InMemoryWorkoutStore()
        }
    let engine = try await WorkoutEngine(store: store, sessionExecutor: { _ in loop })
    let session = engine.session(for: DeviceIdentity("session-behind-epoll"))
    let server = Thread { loop.run(device: descriptor, session: session) }
    server.start()
    // A session answers at once only once it has its device's state from the store: its first batch waits for that.
    // One line the protocol rejects (an empty object) makes it, before the device is served.
    _ = await session.handle([CommandLineDecoder().decode(UnsafeRawBufferPointer(start: nil, count: 0))])
    loop.watch(descriptor)
    while true { sleep(3600) }
} catch {
    FileHandle.standardError.write(Data("SessionBehindEpoll: \(error)\n".utf8))
    exit(1)
}

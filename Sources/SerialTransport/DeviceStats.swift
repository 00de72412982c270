import Foundation
import Logging
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Counters for one attached device, readable while its pipeline runs.
public final class DeviceStats: Sendable {
    public let identity: DeviceIdentity
    public let path: String
    private let counters = Mutex(Counters())
    /// Set while a first sighting waits for the device's first command.
    ///
    /// See ``announceOnFirstCommand(_:)``.
    private let announcement = Mutex<Logger?>(nil)

    public struct Counters: Sendable, Hashable {
        public var connected = false
        public var connectedSince: Date?
        public var commands = 0
        public var errors = 0
        public var connections = 0
        /// Why the node is not open while the device waits (e.g. "held by another program (pid 42)").
        public var waitingReason: String?
    }

    init(identity: DeviceIdentity, path: String) {
        self.identity = identity
        self.path = path
    }

    public var snapshot: Counters { counters.withLock { $0 } }

    func connected() {
        counters.withLock {
            $0.connected = true
            $0.waitingReason = nil
            $0.connectedSince = Date()
            $0.connections += 1
        }
    }

    func waiting(_ reason: String) {
        counters.withLock { $0.waitingReason = reason }
    }

    func disconnected() {
        counters.withLock { $0.connected = false }
    }

    /// Logs `new wearable seen` with `logger` when the device first sends a line that decodes as a command.
    ///
    /// So a tty that opens but never speaks the protocol (a modem, a console) is not announced as a wearable.
    func announceOnFirstCommand(_ logger: Logger) {
        announcement.withLock { $0 = logger }
    }

    /// Announces the device if it waits for that and `batch` holds a command it sent.
    func announceIfAnswered(_ batch: AnsweredBatch) {
        guard batch.lines.contains(where: { (try? $0.command.get()) != nil }),
            let logger = announcement.withLock({ pending in
                defer { pending = nil }
                return pending
            })
        else { return }
        logger.notice("new wearable seen", metadata: ["device": "\(identity)", "node": "\(path)"])
    }

    func handled(commands: Int, errors: Int) {
        counters.withLock {
            $0.commands += commands
            $0.errors += errors
        }
    }
}

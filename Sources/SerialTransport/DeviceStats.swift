import Foundation
import Synchronization
import WorkoutEngine

/// Counters for one attached device, readable while its pipeline runs.
public final class DeviceStats: Sendable {
    public let identity: DeviceIdentity
    public let path: String
    private let counters = Mutex(Counters())

    public struct Counters: Sendable, Hashable {
        public var connected = false
        public var connectedSince: Date?
        public var commands = 0
        public var errors = 0
        public var connections = 0
    }

    init(identity: DeviceIdentity, path: String) {
        self.identity = identity
        self.path = path
    }

    public var snapshot: Counters { counters.withLock { $0 } }

    func connected() {
        counters.withLock {
            $0.connected = true
            $0.connectedSince = Date()
            $0.connections += 1
        }
    }

    func disconnected() {
        counters.withLock { $0.connected = false }
    }

    func handled(commands: Int, errors: Int) {
        counters.withLock {
            $0.commands += commands
            $0.errors += errors
        }
    }
}

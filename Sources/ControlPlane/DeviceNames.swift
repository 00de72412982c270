import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// The devices' names for the responder.
///
/// Read from the store once, then kept, since `label` is the only writer.
final class DeviceNames: Sendable {
    private struct Cache {
        var names: [DeviceIdentity: String]?
        /// Bumped by every write, so a read that began before it never stores what it read.
        var generation = 0
    }

    private let store: (any DeviceNameStore)?
    private let cache = Mutex(Cache())

    init(store: (any DeviceNameStore)?) {
        self.store = store
    }

    /// Whether names can be kept at all.
    var isAvailable: Bool { store != nil }

    func all() async throws -> [DeviceIdentity: String] {
        let (names, generation) = cache.withLock { ($0.names, $0.generation) }
        if let names { return names }
        guard let store else { return [:] }
        let read = try await store.deviceNames()
        cache.withLock { cache in
            if cache.generation == generation { cache.names = read }
        }
        return read
    }

    func set(_ name: String?, for device: DeviceIdentity) async throws {
        guard let store else { return }
        try await store.setDeviceName(name, for: device)
        cache.withLock { cache in
            cache.generation += 1
            cache.names = nil
        }
    }
}

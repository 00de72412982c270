import WorkoutProtocol

/// The names people give wearables (`workoutctl label`), kept with the store.
///
/// They outlive restarts and replugs, and are shown beside a device's identity wherever it appears: the page, the API,
/// workoutctl, CSV.
public protocol DeviceNameStore: Sendable {
    /// Every named device and its name.
    func deviceNames() async throws -> [DeviceIdentity: String]
    /// Gives `device` the name `name`, or forgets its name when `name` is nil.
    func setDeviceName(_ name: String?, for device: DeviceIdentity) async throws
}

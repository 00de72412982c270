import WorkoutEngine
import WorkoutProtocol

/// What a ``DeviceManager`` reports about its devices' connections as it happens.
///
/// Observers such as the control socket receive it. (Command traffic is the engine's ``EngineEvent``s.)
///
/// Observers run inline on the device's path: they must not block.
public enum DeviceActivity: Sendable {
    case connected(DeviceStats)
    case disconnected(DeviceStats)

    public typealias Observer = @Sendable (DeviceActivity) -> Void
}

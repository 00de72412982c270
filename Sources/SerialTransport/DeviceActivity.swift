import WorkoutEngine
import WorkoutProtocol

/// What a ``DeviceManager`` reports about its devices as it happens, for observers such as the control socket.
///
/// Observers run inline on the device's path: they must not block.
public enum DeviceActivity: Sendable {
    case connected(DeviceStats)
    case disconnected(DeviceStats)
    /// A batch of lines read from the device, about to run on its session.
    case received(DeviceIdentity, [DecodedLine])
    /// The batch's replies, handed to the device's pipeline to write.
    case replied(DeviceIdentity, [Reply])

    public typealias Observer = @Sendable (DeviceActivity) -> Void
}

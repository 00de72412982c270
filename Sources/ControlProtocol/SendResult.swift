import WorkoutProtocol

/// The `send` result: the device the line ran on and the reply the device would have received.
public struct SendResult: Codable, Hashable, Sendable {
    public var device: String
    public var reply: Reply

    public init(device: String, reply: Reply) {
        self.device = device
        self.reply = reply
    }
}

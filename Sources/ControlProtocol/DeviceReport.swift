import Foundation

/// One attached device in the `devices` result.
public struct DeviceReport: Codable, Hashable, Sendable {
    /// Who the device is (stable across replugs).
    public var identity: String
    /// The node it is served on, e.g. `/dev/ttyACM0`.
    public var node: String
    public var connected: Bool
    /// When the current (or last) connection was made; `nil` if it never opened.
    public var connectedSince: Date?
    public var commands: Int
    public var errors: Int
    public var connections: Int
    /// Why the node is not open while it waits, e.g. "held by another program (pid 42)"; nil when connected.
    public var waitingReason: String?

    public init(
        identity: String, node: String, connected: Bool, connectedSince: Date?, commands: Int, errors: Int, connections: Int,
        waitingReason: String? = nil
    ) {
        self.identity = identity
        self.node = node
        self.connected = connected
        self.connectedSince = connectedSince
        self.commands = commands
        self.errors = errors
        self.connections = connections
        self.waitingReason = waitingReason
    }
}

/// The `devices` result.
public struct DeviceList: Codable, Hashable, Sendable {
    public var devices: [DeviceReport]
    public init(devices: [DeviceReport]) { self.devices = devices }
}

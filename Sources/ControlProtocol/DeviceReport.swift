import Foundation

/// One attached device in the `devices` result.
public struct DeviceReport: Codable, Hashable, Sendable {
    /// Who the device is (stable across replugs).
    public var identity: String
    /// The node it is served on, e.g. `/dev/ttyACM0`.
    public var node: String
    /// The name people gave it (`workoutctl label`); nil when it has none.
    public var name: String?
    public var connected: Bool
    /// When the current (or last) connection was made; `nil` if it never opened.
    public var connectedSince: Date?
    public var commands: Int
    public var errors: Int
    public var connections: Int
    /// Why the node is not open while it waits, e.g. "held by another program (pid 42)".
    ///
    /// Nil when connected.
    public var waitingReason: String?
    /// Set when the device matched but is not served, and why.
    ///
    /// "identity already attached on /dev/ttyACM0", "not in devices.allowed_serials". Its node stays closed;
    /// `connected` is false and the counters 0.
    public var refused: String?

    public init(
        identity: String,
        node: String,
        connected: Bool,
        connectedSince: Date?,
        commands: Int,
        errors: Int,
        connections: Int,
        waitingReason: String? = nil,
        refused: String? = nil
    ) {
        self.refused = refused
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

/// A device refused since start because `devices.allowed_serials` does not list it.
///
/// `workoutctl devices --unknown` lists these.
public struct UnknownDeviceReport: Codable, Hashable, Sendable {
    /// The identity to add to `devices.allowed_serials` to enrol it.
    public var identity: String
    /// The node it was last seen on.
    public var node: String
    /// The name people gave it (`workoutctl label`), which may come before it is enrolled.
    public var name: String?
    public var firstSeen: Date
    public var lastSeen: Date
    public var sightings: Int

    public init(identity: String, node: String, firstSeen: Date, lastSeen: Date, sightings: Int) {
        self.identity = identity
        self.node = node
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.sightings = sightings
    }
}

/// The `devices` result: served devices, refused ones, and the unknown identities seen since start.
///
/// Refused devices have ``DeviceReport/refused`` set and come after the served ones.
public struct DeviceList: Codable, Hashable, Sendable {
    public var devices: [DeviceReport]
    /// Absent from an older daemon's reply.
    public var unknown: [UnknownDeviceReport]?
    public init(devices: [DeviceReport], unknown: [UnknownDeviceReport]? = nil) {
        self.devices = devices
        self.unknown = unknown
    }
}

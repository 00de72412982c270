/// A tty device as libudev reported it, copied out of libudev's objects so it can cross threads.
public struct DiscoveredDevice: Sendable, Hashable {
    /// What happened to the device. Enumeration at start-up reports ``present``.
    public enum Action: Sendable, Hashable, CustomStringConvertible {
        case present
        case add
        case change
        case remove
        /// An action workoutd has no use for (`bind`, `unbind`, `move`, ...).
        case other(String)

        public init(udevAction: String) {
            switch udevAction {
            case "add": self = .add
            case "change": self = .change
            case "remove": self = .remove
            default: self = .other(udevAction)
            }
        }

        public var description: String {
            switch self {
            case .present: "present"
            case .add: "add"
            case .change: "change"
            case .remove: "remove"
            case .other(let action): action
            }
        }
    }

    public var action: Action
    /// `/sys/devices/...`; changes when the device is plugged into another port or renumbered.
    public var syspath: String
    /// `/dev/ttyACM0`, or `nil` for a device without a node (never served).
    public var devnode: String?
    /// udev properties (`ID_SERIAL`, `ID_VENDOR_ID`, `WORKOUTD_DEVICE`, ...).
    public var properties: [String: String]

    public init(action: Action, syspath: String, devnode: String?, properties: [String: String]) {
        self.action = action
        self.syspath = syspath
        self.devnode = devnode
        self.properties = properties
    }
}

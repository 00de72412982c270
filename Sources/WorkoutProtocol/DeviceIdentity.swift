/// Who a device is, stable across replugs and renumbering, never the `ttyACMn` name.
///
/// It comes from `ID_SERIAL` or the configured path. Sessions, workouts and replayed replies are keyed by it.
public struct DeviceIdentity: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}

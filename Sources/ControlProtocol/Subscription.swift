/// The `subscribe` result; event lines follow on the same connection.
public struct Subscription: Codable, Hashable, Sendable {
    public var subscribed: Bool
    public init(subscribed: Bool = true) { self.subscribed = subscribed }
}

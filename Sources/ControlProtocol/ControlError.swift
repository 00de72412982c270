/// Why a request failed: `{"code":"unknown_method","message":"..."}` in a reply's `error`.
public struct ControlError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Stable, machine-readable reasons; the message is for people.
    public enum Code: String, Hashable, Sendable, Codable {
        /// The line is not a JSON object.
        case parseError = "parse_error"
        /// An object without a usable `method`.
        case invalidRequest = "invalid_request"
        case unknownMethod = "unknown_method"
        /// `params` missing a key, or a value of the wrong type or out of range.
        case invalidParams = "invalid_params"
        /// The request line exceeded the server's limit.
        case requestTooLong = "request_too_long"
        /// The server already has as many clients as it accepts; the connection is closed.
        case tooManyClients = "too_many_clients"
        /// `send` named a device that is not connected (and did not ask to create a session).
        case unknownDevice = "unknown_device"
        /// The daemon could not answer now (its store failed).
        case unavailable
        /// The client's user may not make this request (peer credentials; see ``ControlAccess``).
        case permissionDenied = "permission_denied"

    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

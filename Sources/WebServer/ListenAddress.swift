/// `web.listen`'s `host:port` (`[::1]:8470` for IPv6).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port` or `[v6]:port`; anything else throws, saying what is wrong.
    public init(parsing text: String) throws(ListenAddressError) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ListenAddressError("must be host:port, e.g. 127.0.0.1:8470 or [::1]:8470")
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw ListenAddressError("must be host:port, e.g. 127.0.0.1:8470 (or off)")
            }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty, hostPart.allSatisfy({ $0.isLetter || $0.isNumber || ".:-".contains($0) }) else {
            throw ListenAddressError("has no valid host before the port")
        }
        // 0: any free port (the log names it), for tests that run side by side.
        guard let port = Int(portPart), (0...65535).contains(port) else {
            throw ListenAddressError("needs a port from 1 to 65535")
        }
        self.init(host: String(hostPart), port: port)
    }

    /// Reachable from this machine only: 127.0.0.0/8, ::1 or `localhost`. Any other address (0.0.0.0 and ::
    /// included) is reachable from the network and needs a login.
    public var isLoopback: Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

public struct ListenAddressError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

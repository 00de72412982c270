import NIOCore

/// The `Host` a request names, split into its name and port.
///
/// For example `hub.local:8470`, `[::1]:8470` or `192.0.2.7`.
struct HostHeader: Hashable, Sendable {
    /// Lower case, without the brackets of an IPv6 literal or a trailing dot.
    var name: String
    var port: Int?

    init?(_ text: String) {
        let name: Substring
        var port: Int?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            name = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = text.lastIndex(of: ":") {
            guard !text[..<colon].contains(":"), let number = Int(text[text.index(after: colon)...]) else {
                return nil
            }
            name = text[..<colon]
            port = number
        } else {
            name = Substring(text)
        }
        var lowered = name.lowercased()
        if lowered.hasSuffix(".") { lowered.removeLast() }
        guard !lowered.isEmpty, port.map({ (0...65535).contains($0) }) ?? true else { return nil }
        self.name = lowered
        self.port = port
    }
}

/// Which `Host`s the server answers.
///
/// One that names the listener (the address the connection arrived at, `localhost` on a loopback connection, the host
/// `web.listen` names) or one of `web.server_names`. Any other is answered 421: a page of another site whose name was
/// made to resolve to the hub (DNS rebinding) cannot read it.
struct HostCheck: Sendable {
    enum Verdict: Equatable {
        case allowed
        /// No usable `Host` (HTTP/1.1 requires one): 400.
        case missing
        /// A name that is not this server's: 421.
        case misdirected
    }

    /// `web.server_names`, and the host of `web.listen`, lower case.
    let names: Set<String>

    init(listen: ListenAddress?, serverNames: [String]) {
        var names = Set(serverNames.compactMap { HostHeader($0)?.name })
        if let host = listen?.host, let header = HostHeader(host.contains(":") ? "[\(host)]" : host) {
            names.insert(header.name)
        }
        self.names = names
    }

    /// Whether a request naming `host`, on a connection that arrived at `local`, is this server's.
    func verdict(host: String?, local: SocketAddress?) -> Verdict {
        guard let host, let header = HostHeader(host) else { return .missing }
        if names.contains(header.name) { return .allowed }
        let arrivedAt = local.flatMap(Self.address)
        if let arrivedAt, Self.address(literal: header.name) == arrivedAt { return .allowed }
        if header.name == "localhost", let arrivedAt, Self.isLoopback(arrivedAt) { return .allowed }
        return .misdirected
    }

    /// An address as text in one form.
    ///
    /// IPv4 dotted (an IPv4-mapped IPv6 address too), IPv6 as NIO prints it.
    private static func address(_ socket: SocketAddress) -> String? {
        guard let text = socket.ipAddress else { return nil }
        return address(literal: text)
    }

    /// `text` in the same form, when it is an IP literal.
    private static func address(literal text: String) -> String? {
        if let mapped = text.lowercased().split(separator: ":").last, text.lowercased().hasPrefix("::ffff:"),
            mapped.contains(".")
        {
            return String(mapped)
        }
        guard let parsed = try? SocketAddress(ipAddress: text, port: 0) else { return nil }
        return parsed.ipAddress
    }

    private static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.")
    }
}

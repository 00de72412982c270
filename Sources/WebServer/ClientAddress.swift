import NIOCore

/// Who a client is, for counting what it may do (failed logins, connections, event streams).
///
/// Its IPv4 address, or the /64 of its IPv6 address, since one IPv6 host is given a whole /64 to pick addresses from.
struct ClientAddress: Hashable, Sendable, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }

    /// The client behind `address`.
    ///
    /// An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, from a listener on `::`) is the IPv4 client it maps.
    init(_ address: SocketAddress?) {
        switch address {
        case .v4(let v4)?:
            self.init(Self.text(ipv4: withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }))
        case .v6(let v6)?:
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            self.init(ipv6: bytes)
        default:
            self.init("unknown")
        }
    }

    /// From the 16 bytes of an IPv6 address.
    init(ipv6 bytes: [UInt8]) {
        guard bytes.count == 16 else {
            self.init("unknown")
            return
        }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            self.init(Self.text(ipv4: Array(bytes[12..<16])))
            return
        }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        self.init(groups.joined(separator: ":") + "::/64")
    }

    private static func text(ipv4 bytes: [UInt8]) -> String {
        bytes.map(String.init).joined(separator: ".")
    }
}

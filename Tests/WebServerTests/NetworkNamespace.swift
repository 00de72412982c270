import Foundation
import WorkoutdTesting

/// A network namespace of the test's own, joined to this one by a veth pair.
///
/// The daemon runs inside it (through ``launcher``) on LAN-like addresses, the test reaches it from addresses on the
/// pair's outer end. Nothing leaves the machine: a veth pair is a cable with both ends here. Deleting the namespace
/// deletes the pair, and with it every address the test added. Needs root (`ip netns`).
final class NetworkNamespace: @unchecked Sendable {
    let name: String
    /// The inner end's addresses, where the daemon listens: an IPv4 one and an IPv6 one.
    let inside: String
    let inside6: String
    /// The outer end's first address of each family; ``addOutside(_:)`` adds more.
    let outside: String
    let outside6: String
    private let link: String

    init() throws {
        let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 16)
        name = "wdweb-\(tag)"
        link = "wdw\(tag)"
        // 198.18.0.0/15 (RFC 2544, for benchmarks) and a ULA prefix: nothing on this machine uses them.
        let subnet = Int.random(in: 0..<256)
        inside = "198.18.\(subnet).1"
        outside = "198.18.\(subnet).2"
        let prefix = "fd57:\(String(subnet, radix: 16)):\(tag.prefix(4))"
        inside6 = "\(prefix)::1"
        outside6 = "\(prefix)::2"
        try Self.ip(["netns", "add", name])
        do {
            try Self.ip(["-n", name, "link", "set", "lo", "up"])
            try Self.ip(["link", "add", link + "h", "type", "veth", "peer", "name", link + "n"])
            try Self.ip(["link", "set", link + "n", "netns", name])
            try Self.ip(["-n", name, "addr", "add", inside + "/24", "dev", link + "n"])
            try Self.ip(["-n", name, "-6", "addr", "add", inside6 + "/48", "dev", link + "n", "nodad"])
            try Self.ip(["-n", name, "link", "set", link + "n", "up"])
            try Self.ip(["addr", "add", outside + "/24", "dev", link + "h"])
            try Self.ip(["-6", "addr", "add", outside6 + "/48", "dev", link + "h", "nodad"])
            try Self.ip(["link", "set", link + "h", "up"])
        } catch {
            try? Self.ip(["netns", "del", name])
            throw error
        }
    }

    /// Runs a program inside the namespace (it execs the program, so its pid is the program's).
    var launcher: [String] { [Self.ipPath, "netns", "exec", name] }

    /// Another address on the outer end, to connect from.
    ///
    /// `198.18.x.y`, or an IPv6 one in the inner end's /48.
    func addOutside(_ address: String) throws {
        if address.contains(":") {
            try Self.ip(["-6", "addr", "add", address + "/128", "dev", link + "h", "nodad"])
        } else {
            try Self.ip(["addr", "add", address + "/32", "dev", link + "h"])
        }
    }

    /// The outer IPv4 address with last byte `host`.
    func outside(_ host: Int) -> String {
        outside.split(separator: ".").dropLast().joined(separator: ".") + ".\(host)"
    }

    /// iproute2's `ip`, where this system keeps it.
    static let ipPath =
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        ?? "/usr/sbin/ip"

    static func ip(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ipPath)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestingError("ip \(arguments.joined(separator: " ")): \(message)")
        }
    }

    deinit {
        try? Self.ip(["netns", "del", name])
    }
}

import NIOCore
import NIOEmbedded
import Testing

@testable import Replication

/// The guard that keeps a cleartext or MD5 password from a server whose identity was not verified.
///
/// The state machine on the server's bytes, and its handler in a channel.
@Suite struct PasswordGuardTests {
    /// A backend message: type byte, int32 length (itself included), body.
    static func message(_ type: Character, _ body: [UInt8] = []) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(ascii: type.unicodeScalars.first ?? "?"))
        buffer.writeInteger(Int32(4 + body.count))
        buffer.writeBytes(body)
        return buffer
    }

    /// An authentication request ('R') with `code` and any extra body (a salt, SASL data).
    static func authentication(_ code: Int32, extra: [UInt8] = []) -> ByteBuffer {
        var body = ByteBuffer()
        body.writeInteger(code)
        body.writeBytes(extra)
        return message("R", Array(body.readableBytesView))
    }

    static func joined(_ parts: ByteBuffer...) -> ByteBuffer {
        var all = ByteBuffer()
        for var part in parts { all.writeBuffer(&part) }
        return all
    }

    @Test func aCleartextRequestIsRefusedAndNothingOfItPassed() {
        var guardian = PasswordGuard()
        #expect(guardian.receive(Self.authentication(3)) == .refuse(.cleartext))
        // Whatever follows goes nowhere.
        #expect(guardian.receive(Self.authentication(0)) == .wait)
    }

    @Test func anMD5RequestIsRefused() {
        var guardian = PasswordGuard()
        #expect(guardian.receive(Self.authentication(5, extra: [1, 2, 3, 4])) == .refuse(.md5))
    }

    @Test func aRequestSplitAcrossReadsIsRefusedOnceWhole() {
        var guardian = PasswordGuard()
        var request = Self.authentication(3)
        let head = request.readSlice(length: 3) ?? ByteBuffer()
        #expect(guardian.receive(head) == .wait)
        #expect(guardian.receive(request) == .refuse(.cleartext))
    }

    @Test func scramPassesMessageByMessageAndAuthenticationOkEndsTheWatch() {
        var guardian = PasswordGuard()
        let sasl = Self.authentication(10, extra: Array("SCRAM-SHA-256\0\0".utf8))
        #expect(guardian.receive(sasl) == .forward(sasl))
        let first = Self.authentication(11, extra: Array("r=abc,s=c2FsdA==,i=4096".utf8))
        var split = first
        let part = split.readSlice(length: 7) ?? ByteBuffer()
        #expect(guardian.receive(part) == .wait, "half a message is held")
        #expect(guardian.receive(split) == .forward(first))
        // AuthenticationOk and what comes in the same read (ParameterStatus…) go on together; the guard is done.
        let tail = Self.joined(
            Self.authentication(12, extra: Array("v=xyz".utf8)),
            Self.authentication(0),
            Self.message("S", Array("a\0b\0".utf8))
        )
        #expect(guardian.receive(tail) == .finish(tail))
        // A cleartext request after authentication would be no request at all; nothing is checked any more.
        #expect(guardian.receive(Self.authentication(3)) == .forward(Self.authentication(3)))
    }

    @Test func anErrorResponseEndsTheWatchAndReachesPostgresNIO() {
        var guardian = PasswordGuard()
        let error = Self.message("E", Array("SFATAL\0Mno pg_hba.conf entry\0\0".utf8))
        #expect(guardian.receive(error) == .finish(error))
    }

    @Test func anOversizedOrMalformedMessageFailsTheLink() {
        var huge = PasswordGuard()
        var header = ByteBuffer()
        header.writeInteger(UInt8(ascii: "N"))
        header.writeInteger(Int32(1 << 30))
        guard case .refuse(.malformed) = huge.receive(header) else {
            Issue.record("a 1 GiB message was not refused")
            return
        }
        var short = PasswordGuard()
        guard case .refuse(.malformed) = short.receive(Self.message("R", [0, 0])) else {
            Issue.record("an authentication request without its code was not refused")
            return
        }
    }

    @Test func theHandlerFailsTheChannelWithTheReasonAndPassesNothingOn() throws {
        let channel = EmbeddedChannel(handler: PasswordGuardHandler())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5432)).wait()
        #expect(throws: PasswordRefusedError.cleartext) { try channel.writeInbound(Self.authentication(3)) }
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil, "postgres-nio never sees the request")
        #expect(!channel.isActive, "the connection is closed")
        #expect(
            PasswordRefusedError.cleartext.description.contains("replication.allow_password_without_verified_server")
        )
    }

    @Test func theHandlerPassesScramOnAndLeavesThePipelineAfterAuthenticationOk() throws {
        let channel = EmbeddedChannel(handler: PasswordGuardHandler())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5432)).wait()
        let sasl = Self.authentication(10, extra: Array("SCRAM-SHA-256\0\0".utf8))
        try channel.writeInbound(sasl)
        #expect(try channel.readInbound(as: ByteBuffer.self) == sasl)
        try channel.writeInbound(Self.authentication(0))
        #expect(try channel.readInbound(as: ByteBuffer.self) == Self.authentication(0))
        #expect(throws: (any Error).self, "the guard removed itself") {
            try channel.pipeline.syncOperations.handler(type: PasswordGuardHandler.self)
        }
        _ = try channel.finish()
    }
}

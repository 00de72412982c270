import NIOCore

/// Stops the connection when the server asks for a cleartext or MD5 password.
///
/// It watches the server's side of PostgreSQL's start-up, message by message, for AuthenticationCleartextPassword and
/// AuthenticationMD5Password: over a link whose server identity was not verified, whoever answers could be collecting
/// the password.
///
/// Why here and not in postgres-nio: postgres-nio 1.33 answers both requests with the password and has no
/// option to refuse. SCRAM-SHA-256 passes: it never sends the password and proves the server knows it.
/// The guard passes the bytes on unchanged, a whole message at a time, until AuthenticationOk or an
/// ErrorResponse ends authentication; from then on it has nothing more to say. A plain state machine (no
/// I/O): ``PasswordGuardHandler`` puts it in the pipeline.
struct PasswordGuard {
    /// What to do with the bytes received so far.
    enum Action: Equatable {
        /// Hold on: no whole message yet.
        case wait
        /// Pass these bytes on (whole messages); authentication goes on.
        case forward(ByteBuffer)
        /// Pass these bytes on; authentication has ended, the guard is done (remove it).
        case finish(ByteBuffer)
        /// Do not pass the request on: fail the connection with this error.
        case refuse(PasswordRefusedError)
    }

    /// Authentication request codes (the int32 after an 'R' message's length).
    enum AuthenticationCode {
        static let ok: Int32 = 0
        static let cleartextPassword: Int32 = 3
        static let md5Password: Int32 = 5
    }

    /// A message longer than this before authentication ends is no PostgreSQL server's.
    ///
    /// Its start-up messages (SASL exchanges, an ErrorResponse, a NegotiateProtocolVersion) are a few hundred bytes.
    static let maximumMessageLength = 64 * 1024

    private enum State {
        case watching
        case done
        case refused
    }

    private var state = State.watching
    /// Received bytes not yet passed on: the start of an incomplete message.
    private var pending = ByteBuffer()

    /// Takes the next bytes from the server.
    mutating func receive(_ bytes: ByteBuffer) -> Action {
        switch state {
        case .done: return .forward(bytes)
        case .refused: return .wait
        case .watching: break
        }
        var bytes = bytes
        pending.writeBuffer(&bytes)
        var scanned = 0
        // Header: type byte, then int32 length counting itself but not the type byte.
        while let type = pending.getInteger(at: pending.readerIndex + scanned, as: UInt8.self),
            let length = pending.getInteger(at: pending.readerIndex + scanned + 1, as: Int32.self)
        {
            guard length >= 4, Int(length) <= Self.maximumMessageLength else {
                state = .refused
                return .refuse(.malformed("a message of \(length) bytes before authentication ended"))
            }
            let total = 1 + Int(length)
            guard pending.readableBytes - scanned >= total else { break }
            let start = pending.readerIndex + scanned
            scanned += total
            switch type {
            case UInt8(ascii: "R"):
                guard let code = pending.getInteger(at: start + 5, as: Int32.self), length >= 8 else {
                    state = .refused
                    return .refuse(.malformed("an authentication request without its code"))
                }
                switch code {
                case AuthenticationCode.ok:
                    return finish()
                case AuthenticationCode.cleartextPassword:
                    state = .refused
                    return .refuse(.cleartext)
                case AuthenticationCode.md5Password:
                    state = .refused
                    return .refuse(.md5)
                default:
                    continue  // SASL (SCRAM) and its continuations: the password is never sent.
                }
            case UInt8(ascii: "E"):
                return finish()  // the server refused the start-up; postgres-nio reports its message
            default:
                continue
            }
        }
        guard scanned > 0, let whole = pending.readSlice(length: scanned) else { return .wait }
        pending.discardReadBytes()
        return .forward(whole)
    }

    private mutating func finish() -> Action {
        state = .done
        let rest = pending
        pending = ByteBuffer()
        return .finish(rest)
    }
}

/// Why the guard stopped a connection; `status` and the log show ``description``.
enum PasswordRefusedError: Error, Equatable, CustomStringConvertible {
    case cleartext
    case md5
    /// The server's start-up did not read as PostgreSQL's.
    case malformed(String)

    var description: String {
        switch self {
        case .cleartext:
            "server asked for a cleartext password over a connection whose identity was not verified; refused (replication.allow_password_without_verified_server)"
        case .md5:
            "server asked for an MD5 password over a connection whose identity was not verified; refused (replication.allow_password_without_verified_server)"
        case .malformed(let what):
            "the server sent \(what); not PostgreSQL's start-up, connection closed"
        }
    }
}

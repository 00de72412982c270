import ControlProtocol
import Foundation
import Logging
import NIOCore
import NIOPosix
import SerialTransport
import ServiceLifecycle
import Synchronization

/// The control socket: a Unix-domain stream socket speaking JSON lines.
///
/// See `docs/control-protocol.md`.
///
/// Runs until graceful shutdown, then closes every client and removes the socket file, so
/// `workoutctl` can tell a stopped daemon from a hung one. The daemon binds it with ``listen()`` before it
/// starts serving, and stops when that fails; a server run without it binds in ``run()`` and only logs a failure.
public final class ControlServer: Service, Sendable {
    private let options: ControlServerOptions
    /// Answers the requests; also what a reload updates.
    public let responder: ControlResponder
    private let group: any EventLoopGroup
    private let logger: Logger
    private let clients = Mutex<[ObjectIdentifier: any Channel]>([:])
    /// The socket bound by ``listen()``, which ``run()`` then serves.
    private let listening = Mutex<(any Channel)?>(nil)

    public init(options: ControlServerOptions, responder: ControlResponder, group: any EventLoopGroup, logger: Logger) {
        self.options = options
        self.responder = responder
        self.group = group
        var logger = logger
        logger[metadataKey: "control_socket"] = "\(options.path)"
        self.logger = logger
    }

    /// Binds the socket now, so that a daemon which cannot have one stops before it says it is ready.
    public func listen() async throws(ControlSocketError) {
        let channel = try await bind()
        listening.withLock { $0 = channel }
    }

    public func run() async throws {
        let server: any Channel
        do {
            if let bound = listening.withLock({ $0 }) {
                server = bound
            } else {
                server = try await bind()
            }
        } catch {
            logger.error(
                "control socket unavailable; workoutctl will not reach this daemon",
                metadata: ["error": "\(error)"]
            )
            try? await gracefulShutdown()
            return
        }
        logger.info("control socket listening")
        try? await gracefulShutdown()
        try? await server.close()
        for client in clients.withLock({ Array($0.values) }) {
            try? await client.close()
        }
        unlink(options.path)
    }

    private func bind() async throws(ControlSocketError) -> any Channel {
        let path = options.path
        try Self.makeDirectories(for: path)
        // A socket file nobody answers on is stale (a crash) and is replaced; a live one is another daemon's.
        if let other = try? await ClientBootstrap(group: group).connect(unixDomainSocketPath: path).get() {
            try? await other.close()
            throw ControlSocketError(path: path, cause: .inUse)
        }
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
                .childChannelInitializer { [self] channel in
                    channel.eventLoop.makeCompletedFuture { try self.configure(channel) }
                }
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
                .get()
        } catch let error as IOError {
            throw ControlSocketError(path: path, cause: .system(error.errnoCode))
        } catch {
            throw ControlSocketError(path: path, cause: .other("\(error)"))
        }
        guard chmod(path, mode_t(options.mode)) == 0 else {
            let reason = errno
            try? await channel.close()
            throw ControlSocketError(path: path, cause: .mode(reason))
        }
        // Group members must be able to connect at all; SO_PEERCRED still decides what they may do. Under the
        // packaged unit the daemon's primary group is the readers' (Group=workoutd), so the socket is theirs
        // from the start: the unit's system call filter refuses chown (@privileged).
        if let group = options.authorization.readerGroupID(), Self.fileGroup(of: path) != group,
            chown(path, uid_t.max, group) != 0
        {
            logger.notice(
                "control socket left in the daemon's group; readers of group \(options.authorization.readerGroup ?? "") cannot connect",
                metadata: [
                    "error": "\(String(cString: strerror(errno)))"
                ]
            )
        }
        return channel
    }

    /// Creates the socket's missing parent directories, as `mkdir -p` does.
    private static func makeDirectories(for path: String) throws(ControlSocketError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/").dropLast() {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw ControlSocketError(path: path, cause: .directory(prefix, errno))
            }
        }
    }

    private static func fileGroup(of path: String) -> gid_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_gid : nil
    }

    private func configure(_ channel: any Channel) throws {
        let counter = responder.clientCount
        guard counter.admit(limit: options.maximumClients) else {
            logger.warning(
                "refusing control client: too many connected",
                metadata: ["limit": "\(options.maximumClients)"]
            )
            try channel.pipeline.syncOperations.addHandler(RefusingHandler(limit: options.maximumClients))
            return
        }
        let key = ObjectIdentifier(channel)
        clients.withLock { $0[key] = channel }
        channel.closeFuture.whenComplete { [self] _ in
            counter.leave()
            _ = clients.withLock { $0.removeValue(forKey: key) }
        }
        try channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(LineFrameDecoder(maximumLineLength: ControlSocket.maximumRequestBytes))
        )
        let access = PeerAccess(channel: channel, authorization: options.authorization, logger: logger)
        try channel.pipeline.syncOperations.addHandler(
            ControlConnectionHandler(responder: responder, options: options, access: access, logger: logger)
        )
    }
}

/// Tells a client past the limit why, then hangs up.
private final class RefusingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func channelActive(context: ChannelHandlerContext) {
        let line = ControlResponder.errorLine(
            id: nil,
            ControlError(.tooManyClients, "workoutd already has \(limit) control clients; try again later.")
        )
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: line))).whenComplete {
            [context = NIOLoopBound(context, eventLoop: context.eventLoop)] _ in
            context.value.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

/// Why the control socket could not be made, in plain words and with what to do about it.
public struct ControlSocketError: Error, CustomStringConvertible {
    public enum Cause: Sendable {
        /// Another process already answers on the path (a second daemon).
        case inUse
        /// A parent directory could not be created: which one, and `errno`.
        case directory(String, Int32)
        /// `bind` failed with this `errno`.
        case system(Int32)
        /// The socket was bound but its permissions could not be set (`errno`).
        case mode(Int32)
        case other(String)
    }

    public var path: String
    public var cause: Cause

    /// `cannot create control socket /run/workoutd/control.sock: permission denied (…what to do…)`.
    public var description: String {
        let fix =
            "run as the daemon's user, or set control_socket (--control-socket) to a path this user may create, or none"
        switch cause {
        case .inUse:
            return
                "cannot create control socket \(path): address in use by another workoutd (a process answers there); stop it, or give this daemon its own control_socket (--control-socket)"
        case .directory(let directory, let code):
            return
                "cannot create control socket \(path): cannot create directory \(directory): \(Self.words(code)); \(fix)"
        case .system(let code) where code == EADDRINUSE:
            return
                "cannot create control socket \(path): address in use by another workoutd; stop it, or give this daemon its own control_socket (--control-socket)"
        case .system(let code):
            return "cannot create control socket \(path): \(Self.words(code)); \(fix)"
        case .mode(let code):
            return "cannot set the mode of control socket \(path): \(Self.words(code))"
        case .other(let text):
            return "cannot create control socket \(path): \(text); \(fix)"
        }
    }

    /// `strerror` in lower case, to read inside a sentence: `permission denied`.
    static func words(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}

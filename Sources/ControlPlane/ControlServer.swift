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
/// `workoutctl` can tell a stopped daemon from a hung one. If the socket cannot be bound the daemon
/// keeps serving its devices; the error is logged.
public final class ControlServer: Service, Sendable {
    private let options: ControlServerOptions
    /// Answers the requests; also what a reload updates.
    public let responder: ControlResponder
    private let group: any EventLoopGroup
    private let logger: Logger
    private let clients = Mutex<[ObjectIdentifier: any Channel]>([:])

    public init(options: ControlServerOptions, responder: ControlResponder, group: any EventLoopGroup, logger: Logger) {
        self.options = options
        self.responder = responder
        self.group = group
        var logger = logger
        logger[metadataKey: "control_socket"] = "\(options.path)"
        self.logger = logger
    }

    public func run() async throws {
        let server: any Channel
        do {
            server = try await bind()
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

    private func bind() async throws -> any Channel {
        let path = options.path
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path,
            withIntermediateDirectories: true
        )
        // A socket file nobody answers on is stale (a crash) and is replaced; a live one is another daemon's.
        if let other = try? await ClientBootstrap(group: group).connect(unixDomainSocketPath: path).get() {
            try? await other.close()
            throw ControlSocketInUse(path: path)
        }
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture { try self.configure(channel) }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            .get()
        guard chmod(path, mode_t(options.mode)) == 0 else {
            let error = String(cString: strerror(errno))
            try? await channel.close()
            throw ControlSocketModeError(path: path, reason: error)
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

/// Another process already answers on the control socket path (a second daemon).
struct ControlSocketInUse: Error, CustomStringConvertible {
    var path: String
    var description: String { "another process is listening on \(path)" }
}

/// The socket was bound but its permissions could not be set.
struct ControlSocketModeError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "cannot set the mode of \(path): \(reason)" }
}

import NIOCore

/// ``PasswordGuard`` in a channel pipeline, between TLS (if any) and postgres-nio's handlers.
///
/// Passes the server's messages on until authentication ends, then removes itself; on a cleartext or MD5 password
/// request it passes nothing on and fails the connection, so postgres-nio never gets to answer it.
final class PasswordGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var guardian = PasswordGuard()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch guardian.receive(unwrapInboundIn(data)) {
        case .wait:
            break
        case .forward(let bytes):
            context.fireChannelRead(wrapInboundOut(bytes))
        case .finish(let bytes):
            if bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        case .refuse(let error):
            // postgres-nio fails the connection with it (as the underlying error) and closes the channel.
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }
}

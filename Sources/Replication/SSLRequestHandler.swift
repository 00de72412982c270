import NIOCore
import NIOTLS

/// Asks the server for TLS the way PostgreSQL's protocol does, and completes ``answer`` with its reply.
///
/// The request is SSLRequest (int32 8, int32 80877103); the answer is whether the server agreed ('S') or not ('N').
///
/// The answer is one byte and nothing may follow it before our TLS ClientHello: bytes after it would be a
/// man in the middle's, to be read as if they came through TLS (CVE-2021-23222), so they fail the link.
final class SSLRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    static let requestCode: Int32 = 80_877_103

    let answer: EventLoopPromise<Bool>
    private var answered = false

    init(answer: EventLoopPromise<Bool>) {
        self.answer = answer
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var request = context.channel.allocator.buffer(capacity: 8)
        request.writeInteger(Int32(8))
        request.writeInteger(Self.requestCode)
        context.writeAndFlush(NIOAny(request), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        guard !answered, bytes.readableBytes == 1, let byte = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self)
        else {
            fail(
                context,
                CentralLinkError.unexpectedTLSAnswer(
                    answered ? "bytes after its answer" : "\(bytes.readableBytes) bytes instead of one"
                )
            )
            return
        }
        answered = true
        switch byte {
        case UInt8(ascii: "S"): answer.succeed(true)
        case UInt8(ascii: "N"): answer.succeed(false)
        default:
            fail(
                context,
                CentralLinkError.unexpectedTLSAnswer("'\(Character(Unicode.Scalar(byte)))' instead of S or N")
            )
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context, error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        answer.fail(CentralLinkError.closedDuringStartup)
        context.fireChannelInactive()
    }

    private func fail(_ context: ChannelHandlerContext, _ error: any Error) {
        answered = true
        answer.fail(error)
        context.close(promise: nil)
    }
}

/// Waits for the TLS handshake the NIOSSL handler before it runs.
///
/// ``done`` succeeds when it completed and fails with what ended it (a certificate that could not be verified, a closed
/// connection).
final class TLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    let done: EventLoopPromise<Void>

    init(done: EventLoopPromise<Void>) {
        self.done = done
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event { done.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Nothing comes before our start-up message; whatever does is not the server's to send.
        done.fail(CentralLinkError.unexpectedTLSAnswer("data before the start-up"))
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(CentralLinkError.closedDuringStartup)
        context.fireChannelInactive()
    }
}

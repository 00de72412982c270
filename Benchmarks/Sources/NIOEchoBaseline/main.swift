// The NIO echo for `make bench`: workoutd's transport with none of its protocol.
//
// Opens the device as workoutd does (`SerialPort.open`, a channel from `NIOPipeBootstrap` on one event loop)
// and answers every newline it reads with the C echo baseline's fixed reply, one write per read. Measured
// beside the C echo and workoutd, it splits workoutd's distance from the pty's limit into what the event
// loop and channel cost and what decoding, handling and encoding commands cost.
//
// Run: NIOEchoBaseline /dev/pts/N    Exits when the other end of the pty closes.
import Foundation
import NIOCore
import NIOPosix
import SerialTransport

/// Counts the newlines of each read and writes one fixed reply per newline.
final class FixedReplyHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The same bytes as Benchmarks/peers/echo-baseline.c's reply.
    static let reply =
        Array(#"{"command_type":"start_workout","status":"ok","workout_id":1}"#.utf8) + [UInt8(ascii: "\n")]

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let input = unwrapInboundIn(data)
        let lines = input.readableBytesView.reduce(into: 0) { count, byte in
            if byte == UInt8(ascii: "\n") { count += 1 }
        }
        guard lines > 0 else { return }
        var output = context.channel.allocator.buffer(capacity: lines * Self.reply.count)
        for _ in 0..<lines { output.writeBytes(Self.reply) }
        context.writeAndFlush(wrapOutboundOut(output), promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // EIO once the master side closes: the run is over.
        context.close(promise: nil)
    }
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: NIOEchoBaseline DEVICE\n".utf8))
    exit(64)
}
do {
    let descriptor = try SerialPort.open(path: CommandLine.arguments[1], baud: 115_200)
    let channel = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton.next())
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(FixedReplyHandler())
            }
        }
        .takingOwnershipOfDescriptor(inputOutput: descriptor).get()
    try await channel.closeFuture.get()
} catch {
    FileHandle.standardError.write(Data("NIOEchoBaseline: \(error)\n".utf8))
    exit(1)
}

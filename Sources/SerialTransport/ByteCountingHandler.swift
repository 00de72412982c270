import Metrics
import NIOCore

/// Counts the bytes a device sends and receives into `workoutd_device_bytes_total{direction}`.
///
/// Sits at the head of the pipeline, so it sees raw bytes before framing and after encoding.
final class ByteCountingHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let received: Counter
    private let sent: Counter

    init(metrics: any MetricsFactory) {
        received = Counter(label: "workoutd_device_bytes_total", dimensions: [("direction", "in")], factory: metrics)
        sent = Counter(label: "workoutd_device_bytes_total", dimensions: [("direction", "out")], factory: metrics)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received.increment(by: unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        sent.increment(by: unwrapOutboundIn(data).readableBytes)
        context.write(data, promise: promise)
    }
}

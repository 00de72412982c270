import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 that records every request and answers with scripted statuses.
final class TestHTTPServer: Sendable {
    struct Request: Sendable {
        var method: HTTPMethod
        var uri: String
        var headers: HTTPHeaders
        var body: String
    }

    private let channel: any Channel
    private let script: Script

    var port: Int { channel.localAddress?.port ?? 0 }
    var url: String { "http://127.0.0.1:\(port)/shares" }
    var requests: [Request] { script.state.withLock { $0.requests } }

    /// Answers with `statuses` in order, then 200 OK.
    init(statuses: [HTTPResponseStatus] = []) async throws {
        let script = Script(statuses: statuses)
        self.script = script
        let recorder = Recorder(record: { request in
            script.state.withLock { current in
                current.requests.append(request)
                return current.statuses.isEmpty ? .ok : current.statuses.removeFirst()
            }
        })
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RecordingHandler(recorder: recorder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func stop() async throws {
        try await channel.close()
    }

    /// What was received and what is still to answer, shared with the connections' handlers.
    private final class Script: Sendable {
        let state: Mutex<(requests: [Request], statuses: [HTTPResponseStatus])>
        init(statuses: [HTTPResponseStatus]) { state = Mutex(([], statuses)) }
    }

    struct Recorder: Sendable {
        var record: @Sendable (Request) -> HTTPResponseStatus
    }

    private final class RecordingHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let recorder: Recorder
        var head: HTTPRequestHead?
        var body = ""

        init(recorder: Recorder) { self.recorder = recorder }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = ""
            case .body(let buffer):
                body += String(buffer: buffer)
            case .end:
                guard let head else { return }
                let status = recorder.record(
                    Request(method: head.method, uri: head.uri, headers: head.headers, body: body)
                )
                let answer = ByteBuffer(string: status == .ok ? "thanks" : "try later")
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "\(answer.readableBytes)")
                // A redirect points at another path of this server: a followed one would be a second request.
                if (300..<400).contains(status.code) { headers.add(name: "Location", value: "/elsewhere") }
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                    promise: nil
                )
                context.write(wrapOutboundOut(.body(.byteBuffer(answer))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}

import ControlProtocol
import Foundation
import OpenAPIRuntime
import Testing
import WebAPI
import WorkoutProtocol
import WorkoutdTesting

/// `/api/events` carries what `workoutctl events` carries.
///
/// Every command of a burst and its reply, in `seq` order with no gap.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebEventStreamTests {
    @Test func aCommandBurstArrivesWholeAndInOrder() async throws {
        let wearable = try SimulatedWearable()
        let web = try WebDaemon(devices: [wearable.devicePath])
        let body = try await web.client().getEvents().ok.body.text_event_hyphen_stream
        var iterator = body.makeAsyncIterator()
        var buffer: [UInt8] = []

        /// The next SSE frame (up to a blank line), as text.
        func nextFrame() async throws -> String {
            while true {
                if let end = buffer.indices.dropLast().first(where: { buffer[$0] == 10 && buffer[$0 + 1] == 10 }) {
                    let frame = String(decoding: buffer[..<end], as: UTF8.self)
                    buffer.removeFirst(end + 2)
                    return frame
                }
                guard let chunk = try await iterator.next() else { throw TestingError("the event stream ended") }
                buffer += chunk
            }
        }

        #expect(try await nextFrame() == ": ready")
        let burst = 300
        let lines = (0..<burst).map { n in
            n % 2 == 0 ? CommandLines.start(id: .init(n), location: "Burst") : CommandLines.end(id: .init(n))
        }
        try wearable.write(Array(lines.map { $0 + "\n" }.joined().utf8))
        _ = try wearable.readLines(burst)

        var commands: [CommandID?] = []
        var replies = 0
        var sequence: [UInt64] = []
        let decoder = ControlSocket.makeDecoder()
        while replies < burst {
            let frame = try await nextFrame()
            // A heartbeat comment may come between events on a loaded machine; an EventSource skips it too.
            if frame == ": heartbeat" { continue }
            #expect(frame.hasPrefix("data: "))
            let event = try decoder.decode(ControlEventLine.self, from: Data(frame.dropFirst("data: ".count).utf8))
                .event
            sequence.append(event.sequence)
            switch event.detail {
            case .commandReceived(_, _, let id, _): commands.append(id)
            case .replySent: replies += 1
            default: break
            }
        }
        #expect(commands == (0..<burst).map { CommandID.integer(Int64($0)) })
        #expect(sequence == Array(sequence[0]...(sequence[0] + UInt64(sequence.count - 1))))
    }
}

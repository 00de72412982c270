import Foundation
import Logging
import NIOCore
import NIOEmbedded
import SerialTransport
import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol

/// The whole device pipeline with a real engine over an in-memory store.
@Suite("Device pipeline")
struct DispatchTests {
    /// Counts `read()` calls reaching the head of the pipeline: how we see reading pause and resume.
    final class ReadCounter: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = Any
        let reads = Atomic<Int>(0)
        func read(context: ChannelHandlerContext) {
            reads.add(1, ordering: .relaxed)
            context.read()
        }
    }

    func makeChannel(
        options: PipelineOptions = PipelineOptions(),
        unreadInput: @escaping CommandDispatchHandler.UnreadInput = { 0 },
        processImmediately: (@Sendable ([DecodedLine]) -> [Reply]?)? = nil,
        process: CommandDispatchHandler.Process? = nil
    ) async throws -> (NIOAsyncTestingChannel, ReadCounter) {
        let engine = try await WorkoutEngine(store: InMemoryWorkoutStore())
        let session = engine.session(for: "test-device")
        let counter = ReadCounter()
        let channel = NIOAsyncTestingChannel()
        try await channel.pipeline.addHandler(counter).get()
        let logger = Logger(label: "test")
        try await channel.eventLoop.submit {
            if let process {
                try DevicePipeline.addHandlers(
                    to: channel.pipeline.syncOperations,
                    options: options,
                    logger: logger,
                    unreadInput: unreadInput,
                    processImmediately: processImmediately,
                    process: process
                )
            } else {
                try DevicePipeline.addHandlers(
                    to: channel.pipeline.syncOperations,
                    options: options,
                    logger: logger,
                    unreadInput: unreadInput
                ) { lines in await session.handle(lines) }
            }
        }.get()
        return (channel, counter)
    }

    func replies(_ channel: NIOAsyncTestingChannel, count: Int) async throws -> [String] {
        var text = ""
        // By scalars, not Characters: "\r\n" is one Character, which is not "\n".
        while text.unicodeScalars.filter({ $0 == "\n" }).count < count {
            var buffer = try await channel.waitForOutboundWrite(as: ByteBuffer.self)
            text += buffer.readString(length: buffer.readableBytes) ?? ""
        }
        return text.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }
    }

    @Test("start, end, share: one ordered reply per line")
    func seedSequence() async throws {
        let (channel, _) = try await makeChannel()
        try await channel.writeInbound(
            ByteBuffer(
                string: """
                    {"command_type":"start_workout","location":"Gary's Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5,"id":1}
                    {"command_type":"start_workout","location":"Gary's Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5,"id":2}
                    {"command_type":"end_workout","id":3}
                    {"command_type":"end_workout","id":4}
                    {"command_type":"share_workout","service":"twitter","id":5}

                    """
            )
        )
        let lines = try await replies(channel, count: 5)
        let decoded = try lines.map { try JSONDecoder().decode(Reply.self, from: Data($0.utf8)) }
        #expect(decoded.map(\.id) == (1...5).map { CommandID.integer(Int64($0)) })
        #expect(decoded[0].outcome == .ok(.workoutStarted(workoutID: 1)))
        #expect(decoded[1].outcome == .error(.workoutAlreadyActive))
        #expect(decoded[3].outcome == .error(.noActiveWorkout))
        #expect(decoded[4].outcome == .ok(.workoutShared(workoutID: 1, service: .twitter, shareID: 1)))
        _ = try await channel.finish()
    }

    @Test("a burst with mixed line endings in one read: each reply ends as its own line did (CR, CRLF: CRLF; LF: LF)")
    func mixedLineEndingsInOneRead() async throws {
        let (channel, _) = try await makeChannel()
        let tooLong = "{\"id\":4,\"pad\":\"" + String(repeating: "x", count: 5000) + "\"}"
        // One read: CRLF, LF, lone CR, an over-long line ended by CR, a malformed line ended by LF, CRLF.
        try await channel.writeInbound(
            ByteBuffer(
                string:
                    "{\"command_type\":\"end_workout\",\"id\":1}\r\n" + "{\"command_type\":\"end_workout\",\"id\":2}\n"
                    + "{\"command_type\":\"end_workout\",\"id\":3}\r" + tooLong + "\r" + "{\"id\":5,}\n"
                    + "{\"command_type\":\"end_workout\",\"id\":6}\r\n"
            )
        )
        // Split on LF only, so a reply that ended in CRLF keeps its CR.
        let lines = try await replies(channel, count: 6)
        #expect(lines.count == 6)
        #expect(lines.map { $0.hasSuffix("\r") } == [true, false, true, true, false, true], "\(lines)")
        #expect(lines.filter { $0.dropLast().contains("\r") }.isEmpty, "a CR only ever right before the LF")
        #expect(lines[0].contains(#""id":1"#) && lines[1].contains(#""id":2"#) && lines[2].contains(#""id":3"#))
        #expect(lines[3].contains(#""code":"line_too_long""#) && lines[4].contains(#""code":"malformed_json""#))
        #expect(lines[5].contains(#""id":6"#))
        _ = try await channel.finish()
    }

    @Test("a batch answered immediately is written before the read returns; one that is not takes the task path")
    func immediateAndDeferredBatches() async throws {
        let immediate = Atomic<Int>(0)
        let deferred = Atomic<Int>(0)
        let (channel, _) = try await makeChannel(
            processImmediately: { lines in
                // Answers only batches of end_workout, as a session answers only when nothing has to wait.
                guard lines.allSatisfy({ (try? $0.command.get()) == .endWorkout }) else { return nil }
                immediate.add(1, ordering: .relaxed)
                return lines.map { .error(.noActiveWorkout, id: $0.id) }
            },
            process: { lines in
                deferred.add(1, ordering: .relaxed)
                return lines.map { _ in .ok(.workoutStarted(workoutID: 9), id: nil) }
            }
        )
        try await channel.writeInbound(ByteBuffer(string: "{\"command_type\":\"end_workout\",\"id\":1}\n"))
        // Written within writeInbound's turn of the loop: no task, no promise in between.
        let written = try await channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) }
        #expect(written?.contains(#""code":"no_active_workout""#) == true)
        #expect(immediate.load(ordering: .relaxed) == 1 && deferred.load(ordering: .relaxed) == 0)

        try await channel.writeInbound(
            ByteBuffer(
                string: """
                    {"command_type":"start_workout","location":"Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}
                    {"command_type":"end_workout","id":2}

                    """
            )
        )
        let lines = try await replies(channel, count: 2)
        #expect(
            lines.first?.contains(#""workout_id":9"#) == true,
            "the batch the immediate path declined ran as a task, in order"
        )
        #expect(deferred.load(ordering: .relaxed) == 1 && immediate.load(ordering: .relaxed) == 1)
        _ = try await channel.finish()
    }

    @Test("reading pauses while too many lines wait, and resumes once they are answered")
    func backPressureOnPendingLines() async throws {
        let gate = AsyncStream<Void>.makeStream()
        let release = gate.continuation
        let started = Atomic<Int>(0)
        // One batch at a time, so each release answers one batch (two run at once by default: PipelinedDispatchTests).
        let (channel, counter) = try await makeChannel(
            options: PipelineOptions(maximumPendingLines: 4, maximumBatchesInFlight: 1),
            process: { lines in
                started.add(1, ordering: .relaxed)
                for await _ in gate.stream { break }
                return lines.map { _ in Reply.error(.nothingToShare, id: nil) }
            }
        )
        // First batch goes in flight and blocks; the next lines pile up.
        try await channel.writeInbound(ByteBuffer(string: "{\"command_type\":\"end_workout\"}\n"))
        for _ in 0..<5 { try await channel.writeInbound(ByteBuffer(string: "{\"command_type\":\"end_workout\"}\n")) }
        let before = counter.reads.load(ordering: .relaxed)
        channel.read()
        channel.read()
        try await channel.eventLoop.submit {}.get()
        #expect(counter.reads.load(ordering: .relaxed) == before, "no reads while 5 lines wait (limit 4)")
        release.yield()
        _ = try await replies(channel, count: 1)
        release.yield()
        _ = try await replies(channel, count: 5)
        try await Task.sleep(for: .milliseconds(50))
        #expect(counter.reads.load(ordering: .relaxed) > before, "reading resumed once the backlog was answered")
        release.finish()
        _ = try await channel.finish()
    }

    @Test("a reload's line limit and reply ending reach an open connection, also for a line half read before it")
    func reloadedOptionsApplyToAnOpenConnection() async throws {
        let (channel, _) = try await makeChannel(options: PipelineOptions(maximumLineLength: 128, replyLineEnding: .lf))
        let long =
            #"{"command_type":"start_workout","location":"\#(String(repeating: "x", count: 30))","date":"2020-03-16T19:45:13Z","intensityLevel":5}"#
        #expect((65...128).contains(long.utf8.count))
        try await channel.writeInbound(ByteBuffer(string: long + "\n"))
        let before = try await replies(channel, count: 1)
        #expect(before[0].contains(#""status":"ok""#) && !before[0].hasSuffix("\r"), "\(before)")

        // The first half of the same line, then the reload, then the rest: the line ends after the reload.
        try await channel.writeInbound(ByteBuffer(string: String(long.prefix(40))))
        try await channel.eventLoop.submit {
            channel.pipeline.syncOperations.fireUserInboundEventTriggered(
                PipelineOptionsChanged(PipelineOptions(maximumLineLength: 64, replyLineEnding: .crlf))
            )
        }.get()
        try await channel.writeInbound(
            ByteBuffer(string: String(long.dropFirst(40)) + "\n" + #"{"command_type":"end_workout"}"# + "\n")
        )
        let after = try await replies(channel, count: 2)
        #expect(after[0].contains(#""code":"line_too_long""#) && after[0].contains("longer than 64 bytes"), "\(after)")
        #expect(after[1].contains(#""status":"ok""#), "a short line still passes: \(after)")
        #expect(after.allSatisfy { $0.hasSuffix("\r") }, "replies end in CRLF from the reload on: \(after)")
        _ = try await channel.finish()
    }

    @Test("a reload that raises the pending-line limit releases a read held by the old one")
    func reloadedPendingLimitAppliesToAnOpenConnection() async throws {
        let gate = AsyncStream<Void>.makeStream()
        let (channel, counter) = try await makeChannel(
            options: PipelineOptions(maximumPendingLines: 4),
            process: { lines in
                for await _ in gate.stream { break }
                return lines.map { _ in Reply.error(.nothingToShare, id: nil) }
            }
        )
        // One batch in flight (blocked), five lines waiting: over the limit of 4, so reading is held.
        for _ in 0..<6 { try await channel.writeInbound(ByteBuffer(string: "{\"command_type\":\"end_workout\"}\n")) }
        let before = counter.reads.load(ordering: .relaxed)
        channel.read()
        try await channel.eventLoop.submit {}.get()
        #expect(counter.reads.load(ordering: .relaxed) == before, "held under the old limit")
        try await channel.eventLoop.submit {
            channel.pipeline.syncOperations.fireUserInboundEventTriggered(
                PipelineOptionsChanged(PipelineOptions(maximumPendingLines: 16))
            )
        }.get()
        #expect(
            counter.reads.load(ordering: .relaxed) == before + 1,
            "five waiting lines are within the new limit of 16"
        )
        gate.continuation.finish()
        _ = try await replies(channel, count: 6)
        _ = try await channel.finish()
    }

    @Test("reading pauses while the device is not taking replies")
    func backPressureOnWritability() async throws {
        let (channel, counter) = try await makeChannel()
        channel.isWritable = false
        try await channel.eventLoop.submit { channel.pipeline.fireChannelWritabilityChanged() }.get()
        let before = counter.reads.load(ordering: .relaxed)
        channel.read()
        #expect(counter.reads.load(ordering: .relaxed) == before)
        channel.isWritable = true
        try await channel.eventLoop.submit { channel.pipeline.fireChannelWritabilityChanged() }.get()
        #expect(counter.reads.load(ordering: .relaxed) == before + 1, "the held read is released")
        _ = try await channel.finish()
    }

    @Test("a batch that finishes after its device went away is dropped: nothing written, nothing trapped")
    func batchOutlivesTheChannel() async throws {
        let gate = AsyncStream<Void>.makeStream()
        let finished = Atomic<Int>(0)
        let (channel, _) = try await makeChannel(process: { lines in
            for await _ in gate.stream { break }
            finished.add(1, ordering: .relaxed)
            return lines.map { _ in Reply.error(.nothingToShare, id: nil) }
        })
        try await channel.writeInbound(ByteBuffer(string: "{\"command_type\":\"end_workout\",\"id\":\"orphan\"}\n"))
        // The wearable is unplugged while its batch runs: the read fails, the handler closes the
        // channel and NIO tears the pipeline down under the batch.
        try await channel.eventLoop.submit {
            channel.pipeline.fireErrorCaught(IOError(errnoCode: EIO, reason: "read(descriptor:pointer:size:)"))
        }.get()
        try await channel.closeFuture.get()
        gate.continuation.yield()
        while finished.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        // The completion hops back onto the loop; let it run there before looking.
        try await Task.sleep(for: .milliseconds(50))
        try await channel.eventLoop.submit {}.get()
        #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil, "no reply reaches a closed device")
        gate.continuation.finish()
    }

    @Test("draining keeps reading while the device's lines are still in the kernel, then closes")
    func drainReadsWhatWasAlreadySent() async throws {
        let unread = Atomic<Int>(120)
        let (channel, counter) = try await makeChannel(unreadInput: { unread.load(ordering: .relaxed) })
        try await channel.eventLoop.submit { channel.pipeline.fireUserInboundEventTriggered(DrainRequest()) }.get()
        let before = counter.reads.load(ordering: .relaxed)
        channel.read()
        try await channel.eventLoop.submit {}.get()
        #expect(counter.reads.load(ordering: .relaxed) == before + 1, "still reading: 120 bytes are waiting")
        // The waiting line arrives and is answered; with nothing left unread the device is closed.
        unread.store(0, ordering: .relaxed)
        try await channel.writeInbound(ByteBuffer(string: "{\"command_type\":\"end_workout\",\"id\":\"late\"}\n"))
        let lines = try await replies(channel, count: 1)
        #expect(lines.first?.contains(#""id":"late""#) == true)
        try await channel.closeFuture.get()
    }

    @Test("a drain request answers what was read, then closes")
    func drain() async throws {
        let (channel, _) = try await makeChannel()
        try await channel.writeInbound(ByteBuffer(string: "{\"command_type\":\"end_workout\",\"id\":\"last\"}\n"))
        try await channel.eventLoop.submit { channel.pipeline.fireUserInboundEventTriggered(DrainRequest()) }.get()
        let lines = try await replies(channel, count: 1)
        #expect(lines.first?.contains(#""id":"last""#) == true)
        try await channel.closeFuture.get()
    }
}

import NIOCore
import NIOEmbedded
import SerialTransport
import Testing
import WorkoutProtocol

/// Framing and decoding, byte by byte, in an `EmbeddedChannel`.
@Suite("Framing and decoding")
struct FramingTests {
    static let endWorkout = #"{"command_type":"end_workout","id":1}"#

    /// Through the pipeline's ``LineDecodingHandler``, and through framing and decoding as two handlers.
    ///
    /// The two handlers are ``ReferenceDecodingHandler``'s pair: every test here holds both to the same lines.
    func decoded(_ chunks: [[UInt8]], limit: Int = 64) throws -> [DecodedLine] {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maximumLineLength: limit)))
        try channel.pipeline.syncOperations.addHandler(ReferenceDecodingHandler(maximumLineLength: limit))
        for chunk in chunks {
            try channel.writeInbound(ByteBuffer(bytes: chunk))
        }
        var lines: [DecodedLine] = []
        while let line = try channel.readInbound(as: DecodedLine.self) { lines.append(line) }
        _ = try channel.finish()
        let fused = try decodedInOneHandler(chunks, limit: limit)
        #expect(fused == lines, "LineDecodingHandler differs from the two handlers it replaces")
        return lines
    }

    func decodedInOneHandler(_ chunks: [[UInt8]], limit: Int) throws -> [DecodedLine] {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(LineDecodingHandler(limit: LineLengthLimit(limit)))
        var lines: [DecodedLine] = []
        for chunk in chunks {
            try channel.writeInbound(ByteBuffer(bytes: chunk))
            // One array per read that had a line, never an empty one.
            while let read = try channel.readInbound(as: [DecodedLine].self) {
                #expect(!read.isEmpty)
                lines += read
            }
        }
        _ = try channel.finish()
        return lines
    }

    @Test("framing and decoding in one handler: the same lines as the two handlers, however the bytes are cut")
    func fusedHandlerParity() throws {
        let long = "{\"id\":9,\"pad\":\"" + String(repeating: "y", count: 90) + "\"}"
        let text =
            Self.endWorkout + "\r\n" + #"{"command_type":"share_workout","service":"twitter","id":"a"}"# + "\r"
            + "\n\n  \r\n" + long + "\n" + #"{"id":3,}"# + "\n" + Self.endWorkout + "\r" + "\n" + #"{"a":1}"# + "\n"
            + "tail"
        let bytes = Array(text.utf8)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var chunks: [[UInt8]] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Int.random(in: 1...24, using: &generator))
                chunks.append(Array(bytes[start..<end]))
                start = end
            }
            _ = try decoded(chunks)
        }
        let whole = try decoded([bytes])
        #expect(whole.count == 6, "\(whole)")
    }

    func decoded(_ text: String, limit: Int = 64) throws -> [DecodedLine] {
        try decoded([Array(text.utf8)], limit: limit)
    }

    @Test("a line split across any number of reads decodes once")
    func splitLines() throws {
        let bytes = Array((Self.endWorkout + "\n").utf8)
        for cut in 1..<bytes.count {
            let lines = try decoded([Array(bytes[..<cut]), Array(bytes[cut...])])
            #expect(lines == [DecodedLine(id: .integer(1), command: .success(.endWorkout))], "cut at \(cut)")
        }
        let oneByteAtATime = try decoded(bytes.map { [$0] })
        #expect(oneByteAtATime.count == 1)
    }

    @Test("CRLF and LF both end a line")
    func crlf() throws {
        let lines = try decoded(Self.endWorkout + "\r\n" + Self.endWorkout + "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.command == .success(.endWorkout) })
    }

    @Test("blank and whitespace-only lines get no reply")
    func blankLines() throws {
        let lines = try decoded("\n\r\n   \n\t \r\n" + Self.endWorkout + "\n\n")
        #expect(lines.count == 1)
    }

    @Test("a long line gets one line_too_long, then decoding resumes")
    func longLineResync() throws {
        let long = String(repeating: "x", count: 500)
        // The long line arrives in pieces, as from a real device; the limit is 64 here.
        let chunks = [
            Array(long.prefix(100).utf8), Array(long.dropFirst(100).utf8), Array(("\n" + Self.endWorkout + "\n").utf8),
        ]
        let lines = try decoded(chunks)
        #expect(lines.count == 2)
        #expect(lines.first.flatMap { try? $0.command.get() } == nil)
        if case .failure(let error) = lines.first?.command { #expect(error.code == .lineTooLong) }
        #expect(lines.last?.command == .success(.endWorkout))
    }

    @Test("a line just over the limit in one read is too long; one at the limit is fine")
    func limitBoundary() throws {
        let atLimit = #"{"command_type":"end_workout"}"# + String(repeating: " ", count: 64 - 30)
        #expect(atLimit.utf8.count == 64)
        #expect(try decoded(atLimit + "\r\n").first?.command == .success(.endWorkout))
        let over = try decoded(atLimit + " \n")
        if case .failure(let error) = over.first?.command {
            #expect(error.code == .lineTooLong)
        } else {
            Issue.record("\(over)")
        }
    }

    @Test("a megabyte with no newline is discarded as it arrives, not buffered")
    func unboundedInputStaysBounded() throws {
        let channel = EmbeddedChannel()
        let decoder = ByteToMessageHandler(LineFrameDecoder(maximumLineLength: 4096))
        try channel.pipeline.syncOperations.addHandler(decoder)
        let chunk = ByteBuffer(repeating: UInt8(ascii: "a"), count: 16 * 1024)
        for _ in 0..<64 { try channel.writeInbound(chunk) }
        #expect(try channel.readInbound(as: LineFrame.self) == .tooLong())
        #expect(try channel.readInbound(as: LineFrame.self) == nil, "one reply for the whole oversized line")
        try channel.writeInbound(ByteBuffer(string: "tail\n{\"a\":1}\n"))
        #expect(try channel.readInbound(as: LineFrame.self) == .line(ByteBuffer(string: "{\"a\":1}")))
        _ = try channel.finish()
    }

    @Test("garbage and invalid UTF-8 become malformed_json, and the next line still works")
    func garbage() throws {
        let bytes: [UInt8] =
            [0x00, 0x01, 0xFF, 0x7B, 0x0A] + Array("}{][\n".utf8) + [0xC3, 0x28, 0x0A]
            + Array((Self.endWorkout + "\n").utf8)
        let lines = try decoded([bytes])
        #expect(lines.count == 4)
        for line in lines.prefix(3) {
            guard case .failure(let error) = line.command else {
                Issue.record("\(line)")
                continue
            }
            #expect(error.code == .malformedJSON)
        }
        #expect(lines[3].command == .success(.endWorkout))
    }

    @Test("a partial line at end of stream is dropped unanswered")
    func partialLineAtEOF() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maximumLineLength: 4096)))
        try channel.writeInbound(ByteBuffer(string: Self.endWorkout + "\n" + #"{"command_type":"end_wor"#))
        #expect(try channel.readInbound(as: LineFrame.self) != nil)
        _ = try channel.finish()
        #expect(try channel.readInbound(as: LineFrame.self) == nil)
    }

    @Test("a lone CR ends a line (a serial terminal's Enter); CR LF is one end, also split across reads")
    func loneCR() throws {
        let twoLines = try decoded(Self.endWorkout + "\r" + Self.endWorkout + "\r")
        #expect(twoLines.count == 2)
        #expect(twoLines.allSatisfy { $0.command == .success(.endWorkout) })
        // CR at the end of one read, LF at the start of the next: one line, and the LF is no blank line.
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maximumLineLength: 64)))
        try channel.writeInbound(ByteBuffer(string: "{\"a\":1}\r"))
        #expect(try channel.readInbound(as: LineFrame.self) == .line(ByteBuffer(string: "{\"a\":1}"), ending: .cr))
        try channel.writeInbound(ByteBuffer(string: "\n{\"b\":2}\n"))
        #expect(try channel.readInbound(as: LineFrame.self) == .line(ByteBuffer(string: "{\"b\":2}")))
        #expect(try channel.readInbound(as: LineFrame.self) == nil)
        _ = try channel.finish()
    }

    @Test("replies end as the line did under auto (CR or CRLF: CRLF; LF: LF), or as configured")
    func replyLineEndings() throws {
        func replies(_ ending: ReplyLineEnding, after input: String) throws -> String {
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(LineDecodingHandler(limit: LineLengthLimit(64)))
            try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(ReplyLineEncoder(lineEnding: ending)))
            try channel.writeInbound(ByteBuffer(string: input))
            var lines: [DecodedLine] = []
            while let read = try channel.readInbound(as: [DecodedLine].self) { lines += read }
            try channel.writeOutbound(
                ReplyBatch(replies: lines.map { .error(.noActiveWorkout, id: $0.id) }, answering: lines)
            )
            let out = try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } ?? ""
            _ = try channel.finish(acceptAlreadyClosed: true)
            return out
        }
        #expect(try replies(.auto, after: "{}\r").hasSuffix("}\r\n"))
        #expect(try replies(.auto, after: "{}\r\n").hasSuffix("}\r\n"))
        #expect(try replies(.auto, after: "{}\n").hasSuffix("}\n") && !replies(.auto, after: "{}\n").contains("\r"))
        #expect(try replies(.lf, after: "{}\r").hasSuffix("}\n") && !replies(.lf, after: "{}\r").contains("\r"))
        #expect(try replies(.crlf, after: "{}\n").hasSuffix("}\r\n"))

        // Endings mixed in one read: under auto each reply follows its own line, not the read's last one.
        func crBeforeEachLF(_ text: String) -> [Bool] {
            let bytes = Array(text.utf8)
            return bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }.map {
                $0 > 0 && bytes[$0 - 1] == UInt8(ascii: "\r")
            }
        }
        let mixed =
            #"{"id":1}"# + "\r\n" + #"{"id":2}"# + "\n" + #"{"id":3}"# + "\r" + #"{"id":4}"# + "\n" + #"{"id":5}"#
            + "\r"
        let auto = try replies(.auto, after: mixed)
        #expect(crBeforeEachLF(auto) == [true, false, true, false, true], "\(auto.debugDescription)")
        #expect(auto.utf8.filter { $0 == UInt8(ascii: "\r") }.count == 3, "no CR other than before an LF")
        for id in 1...5 { #expect(auto.contains(#""id":\#(id),"#)) }
        #expect(try crBeforeEachLF(replies(.lf, after: mixed)) == Array(repeating: false, count: 5))
        #expect(try crBeforeEachLF(replies(.crlf, after: mixed)) == Array(repeating: true, count: 5))
    }
}

import Foundation
import PropertyBased
import Testing
import WorkoutProtocol

/// The reply writer the daemon uses is written field by field.
///
/// `Reply`'s Codable conformance is the specification. For any reply the two must produce the same bytes.
@Suite("Reply writer")
struct ReplyWriterTests {
    static let text = Gen.oneOf(
        Gen.character(in: "\u{0}"..."\u{7F}"),
        Gen.character(in: "\u{A0}"..."\u{D7FF}"),
        Gen.character(in: "\u{1F300}"..."\u{1FAFF}")
    ).string(of: 0...40)

    static let id = Gen.oneOf(
        Gen.always(CommandID?.none),
        Gen.int64(in: Int64.min...Int64.max).map { CommandID?.some(.integer($0)) },
        Gen.int64(in: -3...3).map { CommandID?.some(.integer($0)) },
        text.map { CommandID?.some(.string($0)) }
    )

    static let duration = Gen.oneOf(
        Gen.double(in: 0...1e7),
        Gen.int(in: 0...100_000).map { Double($0) },
        Gen.double(in: 0...1e-3)
    )

    static let acknowledgement = Gen.oneOf(
        Gen.int64(in: 1...Int64.max).map { Acknowledgement.workoutStarted(workoutID: $0) },
        zip(Gen.int64(in: 1...Int64.max), duration).map {
            Acknowledgement.workoutEnded(workoutID: $0, durationSeconds: $1)
        },
        zip(Gen.int64(in: 1...Int64.max), Gen<ShareService>.case, Gen.int64(in: 1...Int64.max))
            .map { Acknowledgement.workoutShared(workoutID: $0, service: $1, shareID: $2) }
    )

    static let error = zip(
        Gen<ErrorCode>.case,
        Gen.oneOf(Gen.always(String?.none), text.map { String?.some($0) }),
        text
    )
    .map { ProtocolError(code: $0, field: $1, message: $2) }

    static let reply = zip(
        id,
        Gen.oneOf(acknowledgement.map { Reply.Outcome.ok($0) }, error.map { Reply.Outcome.error($0) }),
        Gen.bool
    ).map { Reply(id: $0, outcome: $1, replayed: $2) }

    @Test("any reply is written byte for byte as the Codable path writes it")
    func sameBytesAsCodable() async {
        let encoder = ReplyEncoder()
        await propertyCheck(count: 2000, input: Self.reply) { reply in
            #expect(encoder.encodeLine(reply) == encoder.encodeLineThroughCodable(reply), "\(reply)")
        }
    }

    @Test("replies appended one after another are the lines written one by one")
    func appendedLines() async {
        let encoder = ReplyEncoder()
        await propertyCheck(count: 200, input: Self.reply.array(of: 0...20)) { replies in
            var appended: [UInt8] = []
            for reply in replies { encoder.appendLine(reply, to: &appended) }
            #expect(appended == replies.flatMap(encoder.encodeLine))
        }
    }
}

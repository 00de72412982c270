import Foundation
import Testing
import WorkoutProtocol

@Suite("Encoding replies")
struct ReplyEncodingTests {
    let encoder = ReplyEncoder()

    func object(_ reply: Reply) throws -> [String: Any] {
        let line = encoder.encodeLine(reply)
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false, "one line, never pretty-printed")
        return try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
    }

    @Test("a success names its command and echoes the id")
    func success() throws {
        let json = try object(.ok(.workoutStarted(workoutID: 3), id: .integer(7)))
        #expect(json["status"] as? String == "ok")
        #expect(json["command_type"] as? String == "start_workout")
        #expect(json["id"] as? Int == 7)
        #expect(json["workout_id"] as? Int == 3)
        #expect(json["replayed"] == nil)
    }

    @Test("an id's stored text is its wire JSON, an integer's without quotes")
    func idText() throws {
        #expect(CommandID.integer(7).jsonText == "7")
        #expect(CommandID.integer(-42).jsonText == "-42")
        #expect(CommandID.integer(.min).jsonText == "-9223372036854775808")
        #expect(CommandID.integer(.max).jsonText == "9223372036854775807")
        #expect(CommandID.string("7").jsonText == #""7""#)
        #expect(CommandID.string(#"a "quoted" \ id"#).jsonText == #""a \"quoted\" \\ id""#)
        // Each decodes back to the id it came from, the same case included.
        for id: CommandID in [.integer(-1), .string("-1"), .string("Pool — lane 4 ✓"), .string("tab\there")] {
            #expect(try JSONDecoder().decode(CommandID.self, from: Data(id.jsonText.utf8)) == id)
        }
    }

    @Test("a success without an id has no id key")
    func noID() throws {
        let json = try object(.ok(.workoutShared(workoutID: 1, service: .twitter, shareID: 2), id: nil))
        #expect(json.keys.contains("id") == false)
        #expect(json["service"] as? String == "twitter")
    }

    @Test("a failure carries code, field and message")
    func failure() throws {
        let error = ProtocolError(code: .invalidField, field: "intensityLevel", message: "Too hard.")
        let json = try object(.error(error, id: .string("a")))
        #expect(json["status"] as? String == "error")
        #expect(json["id"] as? String == "a")
        let body = try #require(json["error"] as? [String: Any])
        #expect(body["code"] as? String == "invalid_field")
        #expect(body["field"] as? String == "intensityLevel")
        #expect(body["message"] as? String == "Too hard.")
    }

    @Test("replies decode back to themselves, replayed flag included")
    func roundTrip() throws {
        let replies: [Reply] = [
            .ok(.workoutStarted(workoutID: 1), id: .integer(1)),
            .ok(.workoutEnded(workoutID: 1, durationSeconds: 12.5), id: nil),
            .ok(.workoutShared(workoutID: 1, service: .facebook, shareID: 4), id: .string("s")),
            .error(.nothingToShare, id: nil),
            .error(.lineTooLong(limit: 4096), id: nil),
            Reply(id: .integer(2), outcome: .ok(.workoutStarted(workoutID: 9)), replayed: true),
        ]
        for reply in replies {
            let decoded = try JSONDecoder().decode(Reply.self, from: Data(encoder.encodeLine(reply)))
            #expect(decoded == reply)
        }
    }

    @Test("the same reply always encodes to the same bytes")
    func deterministic() {
        let reply = Reply.ok(.workoutShared(workoutID: 1, service: .facebook, shareID: 4), id: .string("s"))
        let first = encoder.encodeLine(reply)
        for _ in 0..<20 { #expect(ReplyEncoder().encodeLine(reply) == first) }
    }
}

import Foundation
import Testing
import WorkoutProtocol

@Suite("Decoding commands")
struct CommandDecodingTests {
    let decoder = CommandLineDecoder()

    func decode(_ line: String) -> DecodedLine { decoder.decode(Array(line.utf8)) }

    @Test("every seed command decodes to its case")
    func seedCommands() throws {
        let seeds = [
            #"{"command_type": "start_workout", "location": "Gary's Gym", "date": "2020-03-16 19:45:13 +0000", "intensityLevel": 5}"#,
            #"{"command_type": "end_workout"}"#,
            #"{"command_type": "share_workout", "service": "twitter"}"#,
        ]
        let decoded = seeds.map { decode($0) }
        let date = Date(timeIntervalSince1970: 1_584_387_913)
        #expect(
            decoded[0]
                == DecodedLine(
                    id: nil,
                    command: .success(.startWorkout(Workout(location: "Gary's Gym", date: date, intensityLevel: 5)))
                )
        )
        #expect(decoded[1] == DecodedLine(id: nil, command: .success(.endWorkout)))
        #expect(decoded[2] == DecodedLine(id: nil, command: .success(.shareWorkout(.twitter))))
    }

    @Test("the shared seed file decodes without an error, if it is there")
    func sharedSeedFile() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../shared/reference/seed-commands.jsonl").standardized
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return }
        let types = text.split(separator: "\n").map { line -> CommandType? in
            try? decode(String(line)).command.get().type
        }
        #expect(types == [.startWorkout, .endWorkout, .shareWorkout])
    }

    @Test("ISO 8601 dates are accepted, with and without fractional seconds")
    func isoDates() throws {
        for text in ["2020-03-16T19:45:13Z", "2020-03-16T20:45:13+01:00", "2020-03-16T19:45:13.000Z"] {
            let line = decode(
                #"{"command_type":"start_workout","location":"Gym","date":"\#(text)","intensityLevel":1}"#
            )
            guard case .startWorkout(let workout) = try line.command.get() else {
                Issue.record("not a start_workout: \(line)")
                continue
            }
            #expect(workout.date == Date(timeIntervalSince1970: 1_584_387_913), "\(text)")
        }
    }

    @Test("ids are echoed verbatim: strings stay strings, integers stay integers")
    func ids() {
        #expect(decode(#"{"command_type":"end_workout","id":7}"#).id == .integer(7))
        #expect(decode(#"{"command_type":"end_workout","id":"7"}"#).id == .string("7"))
        #expect(
            decode(#"{"command_type":"end_workout","id":"x","extra":[1,{"a":null}]}"#).command == .success(.endWorkout)
        )
    }

    @Test("commands encode and decode back to themselves")
    func roundTrip() throws {
        let commands: [Command] = [
            .startWorkout(
                Workout(
                    location: "Gary's Gym / \"north\"",
                    date: Date(timeIntervalSince1970: 1_584_387_913),
                    intensityLevel: 10
                )
            ),
            .endWorkout,
            .shareWorkout(.instagram),
        ]
        for command in commands {
            let data = try JSONEncoder().encode(command)
            #expect(try JSONDecoder().decode(Command.self, from: data) == command)
            // The payload sits beside command_type, as on the wire.
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object["command_type"] as? String == command.type.rawValue)
        }
        let encodedDate = try JSONSerialization.jsonObject(with: JSONEncoder().encode(commands[0])) as? [String: Any]
        #expect(encodedDate?["date"] as? String == "2020-03-16 19:45:13 +0000")
    }
}

@Suite("Error codes and fields")
struct ErrorMappingTests {
    let decoder = CommandLineDecoder()

    struct Case: CustomTestStringConvertible, Sendable {
        var line: [UInt8]
        var code: ErrorCode
        var field: String?
        var id: CommandID?
        var testDescription: String { String(decoding: line, as: UTF8.self) }

        init(_ line: String, _ code: ErrorCode, field: String? = nil, id: CommandID? = nil) {
            self.line = Array(line.utf8)
            self.code = code
            self.field = field
            self.id = id
        }

        init(bytes: [UInt8], _ code: ErrorCode) {
            self.line = bytes
            self.code = code
        }
    }

    static let cases: [Case] = [
        Case("not json", .malformedJSON),
        Case(#"{"command_type":"end_workout""#, .malformedJSON),
        Case("[1,2,3]", .malformedJSON),
        Case(#""end_workout""#, .malformedJSON),
        Case("42", .malformedJSON),
        Case(
            bytes: Array(#"{"command_type":"end_workout","location":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8),
            .malformedJSON
        ),
        Case(#"{"id":4}"#, .unknownCommand, field: "command_type", id: .integer(4)),
        Case(#"{"command_type":"jump","id":"j"}"#, .unknownCommand, field: "command_type", id: .string("j")),
        Case(#"{"command_type":7}"#, .unknownCommand, field: "command_type"),
        Case(
            #"{"command_type":"start_workout","date":"2020-03-16 19:45:13 +0000","intensityLevel":5,"id":1}"#,
            .invalidField,
            field: "location",
            id: .integer(1)
        ),
        Case(
            #"{"command_type":"start_workout","location":"","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#,
            .invalidField,
            field: "location"
        ),
        Case(
            #"{"command_type":"start_workout","location":"\#(String(repeating: "a", count: 257))","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#,
            .invalidField,
            field: "location"
        ),
        Case(
            #"{"command_type":"start_workout","location":5,"date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#,
            .invalidField,
            field: "location"
        ),
        Case(
            #"{"command_type":"start_workout","location":"Gym","date":"yesterday","intensityLevel":5}"#,
            .invalidField,
            field: "date"
        ),
        Case(
            #"{"command_type":"start_workout","location":"Gym","date":"2020-13-45 99:45:13 +0000","intensityLevel":5}"#,
            .invalidField,
            field: "date"
        ),
        Case(#"{"command_type":"start_workout","location":"Gym","intensityLevel":5}"#, .invalidField, field: "date"),
        Case(
            #"{"command_type":"start_workout","location":"Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":0}"#,
            .invalidField,
            field: "intensityLevel"
        ),
        Case(
            #"{"command_type":"start_workout","location":"Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":11}"#,
            .invalidField,
            field: "intensityLevel"
        ),
        Case(
            #"{"command_type":"start_workout","location":"Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":"5"}"#,
            .invalidField,
            field: "intensityLevel"
        ),
        Case(
            #"{"command_type":"start_workout","location":"Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5.5}"#,
            .invalidField,
            field: "intensityLevel"
        ),
        Case(
            #"{"command_type":"start_workout","location":"Gym","date":"2020-03-16 19:45:13 +0000"}"#,
            .invalidField,
            field: "intensityLevel"
        ),
        Case(
            #"{"command_type":"share_workout","service":"myspace","id":9}"#,
            .invalidField,
            field: "service",
            id: .integer(9)
        ),
        Case(#"{"command_type":"share_workout"}"#, .invalidField, field: "service"),
        Case(#"{"command_type":"end_workout","id":true}"#, .invalidField, field: "id"),
        Case(#"{"command_type":"end_workout","id":1.5}"#, .invalidField, field: "id"),
    ]

    @Test("each bad line gets the right code, field and id", arguments: cases)
    func mapping(_ c: Case) throws {
        let line = decoder.decode(c.line)
        guard case .failure(let error) = line.command else {
            Issue.record("decoded successfully: \(line)")
            return
        }
        #expect(error.code == c.code)
        #expect(error.field == c.field)
        #expect(line.id == c.id)
        #expect(
            error.message.hasSuffix(".") && error.message.count > 20,
            "a sentence a person can act on: \(error.message)"
        )
    }
}

import Foundation
import StrictJSON
import Testing
import WorkoutProtocol

/// The hand-written fast paths must say exactly what Foundation says.
///
/// They are the ordered reply writer and the wire-date reader.
@Suite("Fast coding paths agree with Foundation")
struct FastCodingTests {
    static let replies: [Reply] = [
        .ok(.workoutStarted(workoutID: 1), id: .integer(7)),
        .ok(.workoutEnded(workoutID: 1, durationSeconds: 12.5), id: nil),
        .ok(.workoutEnded(workoutID: 2, durationSeconds: 3), id: .integer(-5)),
        .ok(.workoutEnded(workoutID: 3, durationSeconds: 0.001), id: .integer(Int64.min)),
        .ok(.workoutShared(workoutID: 1, service: .facebook, shareID: 4), id: .string("s\"\\/\n\r\t\u{1}\u{1F} é😀")),
        .error(.nothingToShare, id: nil),
        .error(
            ProtocolError(
                code: .invalidField,
                field: "intensityLevel",
                message: "'intensityLevel' must be an integer."
            ),
            id: .string("x")
        ),
        Reply(id: .integer(2), outcome: .ok(.workoutStarted(workoutID: 9)), replayed: true),
    ]

    @Test(
        "replies are written in encoding order, status first",
        arguments: [
            (
                Reply.ok(.workoutStarted(workoutID: 1), id: .integer(7)),
                #"{"status":"ok","command_type":"start_workout","id":7,"workout_id":1}"#
            ),
            (
                Reply.ok(.workoutEnded(workoutID: 1, durationSeconds: 3), id: nil),
                #"{"status":"ok","command_type":"end_workout","workout_id":1,"duration_seconds":3}"#
            ),
            (
                Reply.ok(.workoutShared(workoutID: 1, service: .twitter, shareID: 2), id: .string("a/b")),
                #"{"status":"ok","command_type":"share_workout","id":"a/b","workout_id":1,"service":"twitter","share_id":2}"#
            ),
            (
                Reply.error(
                    ProtocolError(code: .invalidField, field: "date", message: "Bad \"date\"."),
                    id: .integer(3)
                ),
                #"{"status":"error","id":3,"error":{"code":"invalid_field","field":"date","message":"Bad \"date\"."}}"#
            ),
        ]
    )
    func exactLines(reply: Reply, line: String) {
        #expect(ReplyEncoder().encodeLine(reply) == Array((line + "\n").utf8))
    }

    @Test("every reply means what JSONEncoder would have written, and decodes back", arguments: replies)
    func sameAsFoundation(reply: Reply) throws {
        let line = ReplyEncoder().encodeLine(reply)
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(!line.dropLast().contains(UInt8(ascii: "\n")), "escaped, so one line")
        let foundation = try JSONSerialization.jsonObject(with: JSONEncoder().encode(reply)) as? NSDictionary
        let ours = try JSONSerialization.jsonObject(with: Data(line)) as? NSDictionary
        #expect(ours != nil && ours == foundation)
        #expect(try JSONDecoder().decode(Reply.self, from: Data(line)) == reply)
    }

    @Test(
        "numbers are written as their shortest text: integers' digits, whole doubles without \".0\"",
        arguments: [
            0, -0.0, 1, -3, 3600, 0.5, 12.25, 1e15 - 1, 1e15, 1e16, 123_456_789_012_345, -987_654_321, 2.5e-8, 1.0e300,
        ] as [Double]
    )
    func numbers(duration: Double) {
        var expected = duration.description
        if expected.hasSuffix(".0") { expected.removeLast(2) }
        for workoutID in [0, 1, 9, 10, 99, 100, -1, -10, Int64.max, Int64.min] as [Int64] {
            let line = ReplyEncoder().encodeLine(
                .ok(.workoutEnded(workoutID: workoutID, durationSeconds: duration), id: .integer(workoutID))
            )
            #expect(
                String(decoding: line, as: UTF8.self)
                    == #"{"status":"ok","command_type":"end_workout","id":\#(workoutID),"workout_id":\#(workoutID),"duration_seconds":\#(expected)}"#
                    + "\n"
            )
        }
    }

    @Test("commands, which share one encoder between command_type and the payload, encode to valid JSON")
    func commands() throws {
        let commands: [Command] = [
            .startWorkout(
                Workout(location: "Gary's Gym", date: Date(timeIntervalSince1970: 1_584_387_913), intensityLevel: 5)
            ),
            .endWorkout,
            .shareWorkout(.instagram),
        ]
        for command in commands {
            let bytes = try OrderedJSONEncoder().encode(command)
            #expect(try JSONDecoder().decode(Command.self, from: Data(bytes)) == command)
        }
        #expect(
            String(decoding: try OrderedJSONEncoder().encode(commands[0]), as: UTF8.self)
                == #"{"command_type":"start_workout","location":"Gary's Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#
        )
    }

    @Test("nested containers and arrays close in the right places")
    func nesting() throws {
        struct Nested: Encodable {
            enum Key: CodingKey { case a, b, c }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                var inner = container.nestedContainer(keyedBy: Key.self, forKey: .a)
                try inner.encode(1, forKey: .b)
                var list = container.nestedUnkeyedContainer(forKey: .b)
                try list.encode("q")
                try list.encode([1.5, -2])
                try container.encode(["x": [true]], forKey: .c)
            }
        }
        let text = String(decoding: try OrderedJSONEncoder().encode([Nested(), Nested()]), as: UTF8.self)
        let one = #"{"a":{"b":1},"b":["q",[1.5,-2]],"c":{"x":[true]}}"#
        #expect(text == "[\(one),\(one)]")
    }

    @Test("integers of every width, at their extremes, are written as JSONEncoder writes them")
    func integerWidths() throws {
        struct Widths: Encodable {
            var small: [Int8] = [.min, -1, 0, 9, .max]
            var unsigned: [UInt8] = [0, 10, .max]
            var wide: [Int64] = [.min, -1_000_000_007, -10, 10, 99, 100, .max]
            var wideUnsigned: [UInt64] = [0, UInt64(Int64.max) + 1, .max]
            var native: [Int] = [.min, 0, .max]
            var nativeUnsigned: [UInt] = [.max]
        }
        let ours = try OrderedJSONEncoder().encode(Widths())
        let theirs = try JSONEncoder().encode(Widths())
        let decoded = try JSONSerialization.jsonObject(with: Data(ours)) as? NSDictionary
        #expect(decoded == (try JSONSerialization.jsonObject(with: theirs) as? NSDictionary))
        #expect(String(decoding: ours, as: UTF8.self).contains("[-9223372036854775808,-1000000007,-10,10,99,100,"))
        #expect(String(decoding: ours, as: UTF8.self).contains("[0,9223372036854775808,18446744073709551615]"))
    }

    @Test("a value that cannot be JSON is an error, not a broken line")
    func nonFinite() {
        #expect(throws: EncodingError.self) { try OrderedJSONEncoder().encode([Double.nan]) }
    }

    @Test("dates parse exactly as the formatters alone parse them")
    func wireDates() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        formatter.isLenient = false
        let iso = ISO8601DateFormatter()
        let isoFractional = ISO8601DateFormatter()
        isoFractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // What the transformer did before it had a fast path: the formatters alone, in this order.
        func reference(_ text: String) -> Date? {
            formatter.date(from: text) ?? iso.date(from: text) ?? isoFractional.date(from: text)
        }
        // A deterministic spread over every field, valid and out of range, including leap days and offsets.
        var texts = [
            "2020-02-29 23:59:59 +0000", "2021-02-29 00:00:00 +0000", "1900-02-29 00:00:00 +0000",
            "2000-02-29 12:00:00 -0130", "2020-03-16 19:45:13 +1400", "2020-03-16 24:00:00 +0000",
            "2020-03-16 19:60:13 +0000", "2020-03-16 19:45:60 +0000", "2020-00-10 10:00:00 +0000",
            "2020-03-16 19:45:13 +00:00", " 2020-03-16 19:45:13 +0000", "2020-03-16 19:45:13 Z",
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ range: ClosedRange<Int>) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return range.lowerBound + Int((state >> 33) % UInt64(range.count))
        }
        for _ in 0..<3000 {
            texts.append(
                String(
                    format: "%04d-%02d-%02d %02d:%02d:%02d %@%02d%02d",
                    next(1890...2600),
                    next(0...13),
                    next(0...32),
                    next(0...24),
                    next(0...60),
                    next(0...60),
                    next(0...1) == 0 ? "+" : "-",
                    next(0...15),
                    [0, 30, 45, 59, 60][next(0...4)]
                )
            )
        }
        for text in texts {
            // Offsets past ±14:59 or with 60+ minutes are no UTC offset: refused now, where the formatter once
            // read them.
            let offset = text.suffix(4)
            if text.count == 25, let hours = Int(offset.prefix(2)), let minutes = Int(offset.suffix(2)),
                hours > 14 || minutes >= 60
            {
                #expect(WorkoutDateTransformer.parse(text) == nil, "\(text)")
                continue
            }
            #expect(WorkoutDateTransformer.parse(text) == reference(text), "\(text)")
        }
    }
}

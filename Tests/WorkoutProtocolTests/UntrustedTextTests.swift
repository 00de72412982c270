import Foundation
import StrictJSON
import Testing
import WorkoutProtocol

/// Untrusted text stays text: what a wearable may put in `location` and a string `id`.
///
/// Also the limits of both, and the one escaping function every text output uses. Every line is decoded both
/// ways (the flat in-place parser and `JSONDecoder`), which must give the same command or the same error.
@Suite("Untrusted text: forbidden characters, limits, escaping")
struct UntrustedTextTests {
    static func start(location: String, id: String = "1") -> String {
        #"{"id":\#(id),"command_type":"start_workout","location":"\#(location)","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#
    }

    static func end(id: String) -> String { #"{"command_type":"end_workout","id":\#(id)}"# }

    /// The line through both decoding paths; records an issue when they differ.
    static func decodeBothWays(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> DecodedLine {
        let bytes = Array(line.utf8)
        let flat = CommandLineDecoder().decode(bytes)
        let general: DecodedLine
        do {
            general = try JSONDecoder().decode(DecodedLine.self, from: Data(bytes))
        } catch {
            general = DecodedLine(id: nil, command: .failure(ProtocolError(decoding: error)))
        }
        #expect(
            flat == general,
            "the flat parser and JSONDecoder disagree on \(line.debugDescription)",
            sourceLocation: sourceLocation
        )
        return flat
    }

    static func error(_ line: DecodedLine) -> ProtocolError? {
        if case .failure(let error) = line.command { error } else { nil }
    }

    // MARK: Forbidden characters

    struct Forbidden: Sendable, CustomTestStringConvertible {
        var escaped: String
        var message: String
        var testDescription: String { escaped }
    }

    /// One of each class, written as a device would send it.
    ///
    /// JSON escapes for controls, raw UTF-8 for the rest (which JSON allows unescaped), at character 4 of the location.
    static let forbidden: [Forbidden] = [
        .init(escaped: #"\u0000"#, message: "control characters (U+0000 at character 4)"),
        .init(escaped: #"\u001b"#, message: "control characters (U+001B at character 4)"),
        .init(escaped: #"\r"#, message: "control characters (U+000D at character 4)"),
        .init(escaped: #"\n"#, message: "control characters (U+000A at character 4)"),
        .init(escaped: #"\t"#, message: "control characters (U+0009 at character 4)"),
        .init(escaped: #"\u001f"#, message: "control characters (U+001F at character 4)"),
        .init(escaped: "\u{7F}", message: "control characters (U+007F at character 4)"),
        .init(escaped: #"\u007f"#, message: "control characters (U+007F at character 4)"),
        .init(escaped: #"\u0080"#, message: "control characters (U+0080 at character 4)"),
        .init(escaped: "\u{85}", message: "control characters (U+0085 at character 4)"),
        .init(escaped: #"\u009b"#, message: "control characters (U+009B at character 4)"),
        .init(escaped: #"\u009f"#, message: "control characters (U+009F at character 4)"),
        .init(escaped: "\u{202A}", message: "bidirectional formatting characters (U+202A at character 4)"),
        .init(escaped: #"\u202e"#, message: "bidirectional formatting characters (U+202E at character 4)"),
        .init(escaped: "\u{202E}", message: "bidirectional formatting characters (U+202E at character 4)"),
        .init(escaped: "\u{2066}", message: "bidirectional formatting characters (U+2066 at character 4)"),
        .init(escaped: #"\u2069"#, message: "bidirectional formatting characters (U+2069 at character 4)"),
        .init(escaped: "\u{200E}", message: "bidirectional formatting characters (U+200E at character 4)"),
        .init(escaped: "\u{200F}", message: "bidirectional formatting characters (U+200F at character 4)"),
        .init(escaped: "\u{061C}", message: "bidirectional formatting characters (U+061C at character 4)"),
        .init(escaped: "\u{2028}", message: "line or paragraph separators (U+2028 at character 4)"),
        .init(escaped: #"\u2029"#, message: "line or paragraph separators (U+2029 at character 4)"),
    ]

    @Test("each forbidden class in a location is invalid_field naming it and where", arguments: forbidden)
    func forbiddenInLocation(_ item: Forbidden) throws {
        let line = Self.decodeBothWays(Self.start(location: "Gym\(item.escaped)[31mRED"))
        #expect(line.id == .integer(1), "a refused location keeps the id, so the reply still matches")
        #expect(
            Self.error(line)
                == ProtocolError(
                    code: .invalidField,
                    field: "location",
                    message: "'location' must not contain \(item.message)."
                )
        )
    }

    @Test("each forbidden class in a string id is invalid_field, and the reply carries no id", arguments: forbidden)
    func forbiddenInID(_ item: Forbidden) throws {
        let line = Self.decodeBothWays(Self.end(id: "\"abc\(item.escaped)\""))
        #expect(line.id == nil)
        #expect(
            Self.error(line)
                == ProtocolError(code: .invalidField, field: "id", message: "'id' must not contain \(item.message).")
        )
    }

    @Test("the position counts Unicode scalars, not bytes or grapheme clusters")
    func positionsAreScalars() {
        // "e" + combining acute is one grapheme cluster and two scalars; "é" precomposed is two bytes and one scalar.
        let line = Self.decodeBothWays(Self.start(location: "e\u{301}é\u{1F3C3}\\u001b"))
        #expect(Self.error(line)?.message == "'location' must not contain control characters (U+001B at character 5).")
    }

    @Test("printable text that only looks unusual is accepted: quotes, backslashes, RTL letters, ZWJ emoji, NBSP")
    func printableTextIsAccepted() throws {
        let accepted = [
            #"Track \"B\" \\ 4"#, "מכון כושר", "نادي رياضي", "🏃‍♀️ Zürich", "Gym\u{A0}One", "Gym\\u00e9", "lane\u{200D}4",
        ]
        for location in accepted {
            let line = Self.decodeBothWays(Self.start(location: location))
            #expect(
                line.commandType == .startWorkout,
                "\(location) was refused: \(String(describing: Self.error(line)))"
            )
        }
        let id = Self.decodeBothWays(Self.end(id: #""w-1 \"quoted\" \\ é""#))
        #expect(id.id == .string(#"w-1 "quoted" \ é"#))
    }

    @Test("the first forbidden scalar is reported, controls and bidi alike")
    func firstFindingWins() {
        let line = Self.decodeBothWays(Self.start(location: "ab\u{202E}c\\u001b"))
        #expect(
            Self.error(line)?.message
                == "'location' must not contain bidirectional formatting characters (U+202E at character 3)."
        )
    }

    @Test("a blank location made of controls says what it holds, not that it is empty")
    func controlsAreNotBlank() {
        #expect(
            Self.error(Self.decodeBothWays(Self.start(location: #"\n"#)))?.message
                == "'location' must not contain control characters (U+000A at character 1)."
        )
        #expect(Self.error(Self.decodeBothWays(Self.start(location: "  ")))?.message == "'location' must not be empty.")
    }

    // MARK: Limits

    @Test("location: 256 characters (Unicode scalars) are accepted, 257 are not")
    func locationScalarLimit() {
        for text in ["a", "é", "\u{1F3C3}"] {
            let atLimit = Self.decodeBothWays(Self.start(location: String(repeating: text, count: 256)))
            #expect(atLimit.commandType == .startWorkout)
            let past = Self.decodeBothWays(Self.start(location: String(repeating: text, count: 257)))
            #expect(
                Self.error(past)
                    == ProtocolError(
                        code: .invalidField,
                        field: "location",
                        message: "'location' must be at most 256 characters; got 257."
                    )
            )
        }
    }

    @Test("location: combining marks count, so one grapheme cluster cannot carry kilobytes")
    func combiningMarksCount() {
        // Counted in grapheme clusters, as the protocol once counted, this is one "character" of 3,751 bytes.
        let balloon = "e" + String(repeating: "\u{301}", count: 1875)
        let line = Self.decodeBothWays(Self.start(location: balloon))
        #expect(
            Self.error(line)
                == ProtocolError(
                    code: .invalidField,
                    field: "location",
                    message: "'location' must be at most 256 characters; got 1876."
                )
        )
        let escaped = Self.decodeBothWays(Self.start(location: "e" + String(repeating: #"\u0301"#, count: 256)))
        #expect(Self.error(escaped)?.message == "'location' must be at most 256 characters; got 257.")
        #expect(
            Self.decodeBothWays(Self.start(location: "e" + String(repeating: "\u{301}", count: 255))).commandType
                == .startWorkout
        )
    }

    @Test("location: the longest accepted location is 1,024 bytes of UTF-8")
    func locationByteBound() throws {
        let longest = String(repeating: "\u{10FFFD}", count: Workout.maximumLocationLength)
        #expect(longest.utf8.count == Workout.maximumLocationBytes)
        #expect(Workout.maximumLocationBytes == 1024)
        let line = Self.decodeBothWays(Self.start(location: longest))
        guard case .success(.startWorkout(let workout)) = line.command else {
            Issue.record("refused: \(String(describing: Self.error(line)))")
            return
        }
        #expect(workout.location.utf8.count == 1024)
        #expect(
            Self.error(Self.decodeBothWays(Self.start(location: longest + "a")))?.message
                == "'location' must be at most 256 characters; got 257."
        )
    }

    @Test("id: 128 bytes of UTF-8 are accepted and echoed, 129 are invalid_field with no id in the reply")
    func idByteLimit() {
        for (unit, count) in [("a", 128), ("é", 64), ("\u{1F3C3}", 32)] {
            let text = String(repeating: unit, count: count)
            let atLimit = Self.decodeBothWays(Self.end(id: "\"\(text)\""))
            #expect(atLimit.id == .string(text))
            #expect(atLimit.commandType == .endWorkout)
        }
        for (text, bytes) in [
            (String(repeating: "a", count: 129), 129), (String(repeating: "€", count: 43), 129),
            (String(repeating: "a", count: 4000), 4000),
        ] {
            let past = Self.decodeBothWays(Self.end(id: "\"\(text)\""))
            #expect(past.id == nil, "a refused id is not echoed")
            #expect(
                Self.error(past)
                    == ProtocolError(
                        code: .invalidField,
                        field: "id",
                        message: "'id' must be at most 128 bytes of UTF-8; got \(bytes)."
                    )
            )
            let encoded = String(
                decoding: ReplyEncoder().encodeLine(.error(Self.error(past) ?? .noActiveWorkout, id: past.id)),
                as: UTF8.self
            )
            #expect(
                encoded
                    == #"{"status":"error","error":{"code":"invalid_field","field":"id","message":"'id' must be at most 128 bytes of UTF-8; got \#(bytes)."}}"#
                    + "\n"
            )
        }
        // Escapes count as the text they denote: 128 `\u0061` are 128 bytes.
        #expect(
            Self.decodeBothWays(Self.end(id: "\"" + String(repeating: #"\u0061"#, count: 128) + "\"")).id
                == .string(String(repeating: "a", count: 128))
        )
    }

    @Test("id: the integer form is an Int64, at most 20 characters; larger numbers are not an id")
    func integerIDs() {
        #expect(Self.decodeBothWays(Self.end(id: "-9223372036854775808")).id == .integer(.min))
        #expect(Self.decodeBothWays(Self.end(id: "9223372036854775807")).id == .integer(.max))
        let huge = Self.decodeBothWays(Self.end(id: String(repeating: "9", count: 200)))
        #expect(huge.id == nil)
        #expect(Self.error(huge)?.field == "id")
    }

    @Test("a bad command is reported before a refused id, as for an id of the wrong type")
    func commandErrorFirst() {
        let line = Self.decodeBothWays(
            Self.start(location: #"\u001b"#, id: "\"" + String(repeating: "a", count: 200) + "\"")
        )
        #expect(line.id == nil)
        #expect(Self.error(line)?.field == "location")
    }

    @Test("a value quoted back in an error message is at most 64 characters (Unicode scalars), however it combines")
    func quotedValuesAreBounded() {
        let balloon = "x" + String(repeating: "\u{301}", count: 2000)
        let line = Self.decodeBothWays(#"{"command_type":"share_workout","service":"\#(balloon)"}"#)
        let message = Self.error(line)?.message ?? ""
        #expect(
            message
                == "'service' must be one of facebook, instagram, twitter; got '\(String(balloon.unicodeScalars.prefix(61)))...'."
        )
        #expect(message.utf8.count < 250)
    }

    // MARK: Both paths on random text

    /// The forbidden scalars as docs/protocol.md lists them, written out again.
    ///
    /// So the tests do not check the code against itself.
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: true
        default: false
        }
    }

    /// Seeded random locations and ids: both paths agree, and accept exactly what the rules allow.
    ///
    /// They are drawn from printable text, every forbidden class and sizes around the limits, written with and without
    /// escapes.
    @Test("20,000 random locations and ids: both paths agree with each other and with the rules")
    func randomTextAgrees() {
        let pool: [Unicode.Scalar] = [
            "a", "Z", " ", "\"", "\\", "/", "é", "\u{301}", "\u{A0}", "\u{5D0}", "\u{627}", "\u{200B}", "\u{200C}",
            "\u{200D}",
            "\u{FEFF}", "\u{1F3C3}", "\u{10FFFD}", "\u{E0041}",
            "\u{0}", "\u{1B}", "\u{D}", "\u{A}", "\u{7F}", "\u{80}", "\u{85}", "\u{9F}", "\u{A1}",
            "\u{202A}", "\u{202E}", "\u{2066}", "\u{2069}", "\u{200E}", "\u{200F}", "\u{61C}", "\u{2028}", "\u{2029}",
            "\u{2027}", "\u{202F}",
        ]
        var state: UInt64 = 20_261_126
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var disagreements: [String] = []
        for round in 0..<20_000 {
            let length = [0, 1, 3, 20, 127, 128, 129, 255, 256, 257][next(10)]
            // Mostly printable, so lengths near the limits are reached with and without a forbidden scalar.
            let scalars = (0..<length).map { _ in next(8) == 0 ? pool[next(pool.count)] : pool[next(18)] }
            let text = String(String.UnicodeScalarView(scalars))
            let json = scalars.map { scalar -> String in
                switch scalar {
                case "\"": return #"\""#
                case "\\": return #"\\"#
                case _ where scalar.value < 0x20 || next(4) == 0:
                    return scalar.utf16.map { unit -> String in
                        let hex = String(unit, radix: 16)
                        return #"\u"# + String(repeating: "0", count: 4 - hex.count) + hex
                    }.joined()
                default: return String(scalar)
                }
            }.joined()
            let hasForbidden = scalars.contains(where: Self.isForbidden)
            if round % 2 == 0 {
                let line = Self.decodeBothWays(Self.start(location: json))
                let blank = text.allSatisfy(\.isWhitespace)
                let allowed = !hasForbidden && scalars.count <= 256 && !blank
                if allowed != (line.commandType == .startWorkout) || (!allowed && Self.error(line)?.field != "location")
                {
                    disagreements.append("location \(text.debugDescription): \(String(describing: Self.error(line)))")
                }
            } else {
                let line = Self.decodeBothWays(Self.end(id: "\"\(json)\""))
                let allowed = !hasForbidden && text.utf8.count <= 128
                if allowed != (line.id == .string(text)) || (!allowed && Self.error(line)?.field != "id") {
                    disagreements.append("id \(text.debugDescription): \(String(describing: Self.error(line)))")
                }
            }
            if disagreements.count >= 10 { break }
        }
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    }

    // MARK: Escaping for output

    @Test("escaped: controls, DEL, C1, bidi, invisible format characters and backslash become escapes")
    func escaping() {
        #expect(UntrustedText.escaped("Gary's Gym") == "Gary's Gym")
        #expect(UntrustedText.escaped("Gym\u{1B}[31mRED\u{1B}[0m\rFAKE ROW") == #"Gym\x1b[31mRED\x1b[0m\rFAKE ROW"#)
        #expect(UntrustedText.escaped("a\nb\tc\u{0}d\u{7F}") == #"a\nb\tc\x00d\x7f"#)
        #expect(UntrustedText.escaped("a\u{85}b\u{9B}c") == #"a\u{85}b\u{9b}c"#)
        #expect(
            UntrustedText.escaped("abc\u{202E}fed\u{2066}x\u{2069}\u{200F}\u{61C}")
                == #"abc\u{202e}fed\u{2066}x\u{2069}\u{200f}\u{61c}"#
        )
        #expect(
            UntrustedText.escaped("a\u{2028}b\u{200B}c\u{FEFF}d\u{E0041}e\u{E000}f\u{50000}")
                == #"a\u{2028}b\u{200b}c\u{feff}d\u{e0041}e\u{e000}f\u{50000}"#
        )
        #expect(
            UntrustedText.escaped(#"C:\x1b is not ESC"#) == #"C:\\x1b is not ESC"#,
            "a backslash in the text cannot pass for an escape"
        )
        #expect(UntrustedText.escaped(#"say "hi""#) == #"say "hi""#)
        #expect(UntrustedText.escaped(#"say "hi""#, quoting: true) == #"say \"hi\""#)
        // Letters of every script, combining marks, ZWJ emoji sequences, NBSP and the variation selector stay.
        let printable = "Zürich מכון نادي e\u{301} 🏃‍♀️ 👨‍👩‍👧 a\u{A0}b ❤\u{FE0F} 日本"
        #expect(UntrustedText.escaped(printable) == printable)
    }

    @Test("escaped output has no byte a terminal acts on, and is one line")
    func escapedIsInert() {
        var all = String.UnicodeScalarView()
        for value in 0..<0x3000 as Range<UInt32> { if let scalar = Unicode.Scalar(value) { all.append(scalar) } }
        let shown = UntrustedText.escaped(String(all))
        #expect(!shown.unicodeScalars.contains(where: Self.isForbidden))
        #expect(
            !shown.unicodeScalars.contains {
                $0.properties.generalCategory == .format && $0 != "\u{200C}" && $0 != "\u{200D}"
            }
        )
    }

    @Test("logfmt values: no value can end the line, close its quotes or add a field")
    func logfmtValues() {
        #expect(UntrustedText.logfmtValue("wearable-1") == "wearable-1")
        #expect(UntrustedText.logfmtValue("") == #""""#)
        #expect(UntrustedText.logfmtValue("4 times") == #""4 times""#)
        #expect(UntrustedText.logfmtValue(#"C:\dir"#) == #""C:\\dir""#)
        let forged = "x\" level=critical msg=\"owned\\\" \r\n<2>fake\u{1B}[2J"
        #expect(UntrustedText.logfmtValue(forged) == #""x\" level=critical msg=\"owned\\\" \r\n<2>fake\x1b[2J""#)
        for value in [forged, "a=b", "\"", "\\", "\\\"", "a\u{85}b", "x\u{202E}y", "tab\there", "nbsp\u{A0}x", "end\\"]
        {
            let line = "msg key=\(UntrustedText.logfmtValue(value)) next=1"
            let fields = Self.logfmtFields(line)
            #expect(fields.map(\.key) == ["key", "next"], "\(value.debugDescription) → \(line)")
            #expect(fields.first?.value == value, "\(value.debugDescription) does not read back")
            #expect(!line.contains { $0.isNewline })
        }
    }

    /// A strict logfmt reader (bare values end at a space; quoted ones at an unescaped quote; `\"`, `\\`, `\n`, `\r`,
    /// `\t`, `\xNN` and `\u{…}` inside quotes), after a leading message word.
    static func logfmtFields(_ line: String) -> [(key: String, value: String)] {
        var scalars = Array(line.unicodeScalars)[...]
        while let first = scalars.first, first != " " { scalars.removeFirst() }
        var fields: [(key: String, value: String)] = []
        while !scalars.isEmpty {
            scalars.removeFirst()  // the space
            var key = ""
            while let next = scalars.first, next != "=" { key.unicodeScalars.append(scalars.removeFirst()) }
            scalars.removeFirst()
            var value = ""
            if scalars.first == "\"" {
                scalars.removeFirst()
                while let next = scalars.popFirst(), next != "\"" {
                    guard next == "\\", let escape = scalars.popFirst() else {
                        value.unicodeScalars.append(next)
                        continue
                    }
                    switch escape {
                    case "n": value += "\n"
                    case "r": value += "\r"
                    case "t": value += "\t"
                    case "x":
                        let hex = String(String.UnicodeScalarView(scalars.prefix(2)))
                        scalars.removeFirst(2)
                        value.unicodeScalars.append(Unicode.Scalar(UInt8(hex, radix: 16) ?? 0))
                    case "u":
                        scalars.removeFirst()  // {
                        var hex = ""
                        while let digit = scalars.popFirst(), digit != "}" { hex.unicodeScalars.append(digit) }
                        value.unicodeScalars.append(Unicode.Scalar(UInt32(hex, radix: 16) ?? 0) ?? "?")
                    default: value.unicodeScalars.append(escape)
                    }
                }
            } else {
                while let next = scalars.first, next != " " { value.unicodeScalars.append(scalars.removeFirst()) }
            }
            fields.append((key, value))
        }
        return fields
    }

    @Test("JSON for people: C1, DEL, bidi and invisible characters as \\u escapes, the same value to a JSON reader")
    func jsonEscaping() throws {
        struct Row: Codable, Equatable { var location: String }
        let row = Row(location: "Gym\u{1B}[31m\u{7F}\u{85}\u{202E}\u{2066}\u{E0041}\u{1F3C3}é \\ \"")
        let raw = try JSONEncoder.compactSorted().encode(row)
        let shown = UntrustedText.escapedJSON(Array(raw))
        #expect(
            String(decoding: shown, as: UTF8.self)
                == #"{"location":"Gym\u001b[31m\u007f\u0085\u202e\u2066\udb40\udc41🏃é \\ \""}"#
        )
        #expect(try JSONDecoder().decode(Row.self, from: Data(shown)) == row)
        let plain = Array(#"{"location":"Zürich"}"#.utf8)
        #expect(UntrustedText.escapedJSON(plain) == plain)
    }
}

import Testing
import WorkoutdTesting

/// The fuzzer's oracle must itself judge by RFC 8259 and the protocol's rules.
///
/// Or agreeing with it proves nothing.
@Suite("Reference JSON reader (the fuzz oracle)")
struct ReferenceJSONReaderTests {
    @Test(
        "accepts valid JSON, telling objects from other values",
        arguments: [
            (#"{"command_type":"end_workout","id":1}"#, ReferenceJSONReader.Verdict.object),
            (
                " \t{\"a\":[1,-0.5e+10,true,false,null,{}],\"b\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"}\r",
                .object
            ),
            (#"{"a":{"x":1},"b":{"x":1}}"#, .object),
            ("[1,2]", .notAnObject),
            (#""end_workout""#, .notAnObject),
            ("0", .notAnObject),
            (String(repeating: "[", count: 64) + String(repeating: "]", count: 64), .notAnObject),
        ]
    )
    func accepts(line: String, verdict: ReferenceJSONReader.Verdict) {
        #expect(ReferenceJSONReader.verdict(of: Array(line.utf8)) == verdict)
    }

    @Test(
        "refuses what RFC 8259, I-JSON or the depth limit refuse",
        arguments: [
            #"{"command_type":"end_workout",}"#, #"{"a":1 "b":2}"#, #"{"a":"\x"}"#, #"{"a":"\u12G4"}"#,
            #"{"a":"\ud800"}"#, #"{"a":"\udc00\ud800"}"#, "{\"a\":\"\u{0}\"}", "{\"a\":\"\t\"}", #"{"a":01}"#,
            #"{"a":1.}"#,
            #"{"a":.5}"#, #"{"a":1e}"#, #"{"a":-}"#, #"{"a":NaN}"#, #"{"a":tru}"#, #"{"a":1,"a":2}"#,
            #"{"id":1,"\u0069d":2}"#,
            "{\u{C}\"a\":1}", "{\u{A0}\"a\":1}", "{} {}", "", " ",
            String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
        ]
    )
    func refuses(line: String) {
        #expect(ReferenceJSONReader.verdict(of: Array(line.utf8)) == .invalid)
    }

    @Test(
        "refuses ill-formed UTF-8: overlong forms, encoded surrogates, past U+10FFFF, truncated",
        arguments: [
            [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
        ] as [[UInt8]]
    )
    func refusesIllFormedUTF8(bytes: [UInt8]) {
        #expect(ReferenceJSONReader.verdict(of: Array(#"{"a":""#.utf8) + bytes + Array(#""}"#.utf8)) == .invalid)
    }
}

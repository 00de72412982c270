import Foundation
import StrictJSON
import Testing
import WorkoutProtocol

/// `CommandLineDecoder` reads flat objects with its own parser and decoder.
///
/// Every line must come out exactly as Foundation's `JSONDecoder` (with the same error mapping) would decode it.
@Suite("The flat-object decoding path agrees with JSONDecoder")
struct FlatDecodingParityTests {
    static let lines: [String] = [
        #"{"command_type":"start_workout","location":"Gary's Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#,
        #"{"command_type":"start_workout","location":"Gary's Gym","date":"2020-03-16T19:45:13Z","intensityLevel":5,"id":7}"#,
        #"{"command_type":"end_workout"}"#, #"{"command_type":"end_workout","id":"abc"}"#,
        #"{"command_type":"end_workout","id":-12}"#,
        #"{"command_type":"share_workout","service":"twitter","id":1}"#,
        #"{"command_type":"share_workout","service":"myspace","id":1}"#,
        #"{"command_type":"share_workout","service":5,"id":1}"#,
        #"{"command_type":"share_workout","service":null,"id":1}"#,
        #"{"command_type":"share_workout","id":1}"#, #"{"id":1}"#, #"{}"#, #"{"command_type":null}"#,
        #"{"command_type":3}"#, #"{"command_type":"dance","id":"x"}"#,
        #"{"command_type":"end_workout","id":true}"#, #"{"command_type":"end_workout","id":null}"#,
        #"{"command_type":"end_workout","id":1.5}"#,
        #"{"command_type":"end_workout","id":1e2}"#, #"{"command_type":"end_workout","id":-0}"#,
        #"{"command_type":"end_workout","id":99999999999999999999999}"#,
        #"{"command_type":"end_workout","id":123456789012345678}"#,
        #"{"command_type":"end_workout","id":1234567890123456789}"#,
        #"{"command_type":"start_workout","location":"","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#,
        #"{"command_type":"start_workout","location":"  ","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":5.5}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":11}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":0}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":-0}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":"5"}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":null}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000"}"#,
        #"{"command_type":"start_workout","location":"X","date":"yesterday","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"X","date":5,"intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":7,"date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"Track \"B\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"lone \ud83d","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"lone \ude00 x","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"bad \q","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"Pool — lane 4 ☃","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"\u0000","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        "{\"command_type\":\"start_workout\",\"location\":\"" + String(repeating: "a", count: 257)
            + "\",\"date\":\"2020-03-16 19:45:13 +0000\",\"intensityLevel\":3}",
        #"  { "command_type" : "end_workout" , "id" : 4 }  "#, "\t{\"command_type\":\"end_workout\"}\r",
        #"{"command_type":"end_workout","command_type":"start_workout"}"#,
        #"{"command_type":"end_workout","extra":{"a":[1,2]}}"#,
        #"{"command_type":"end_workout","extra":[1]}"#, #"{"command_type":"end_workout"} x"#,
        #"{"command_type":"end_workout"}}"#,
        #"{"command_type":"end_workout",}"#, #"{"command_type":"end_workout""#, #"[1,2]"#, #""str""#, #"5"#, #"null"#,
        #"nonsense"#, #"{"#,
        #"{"command_type":"end_workout","x":tru}"#, #"{"command_type":"end_workout","x":true,"y":false,"z":null}"#,
        #"{"command_type":"end_workout","x":01}"#,
        #"{"command_type":"end_workout","id":"\u0041"}"#, #"{"comm\u0061nd_type":"end_workout"}"#,
        #"{"command_type":"end_workout","id":""}"#,
        #"{"command_type":"end_workout","x":"ctl\u0009tab"}"#, #"{"command_type":"end_workout","id":-}"#,
        #"{"command_type":"end_workout","id":1.}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":1e1}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":9007199254740993}"#,
        #"{"command_type":"share_workout","service":"twitter","id":{"a":1}}"#,
        #"{"command_type":"share_workout","service":"twitter","id":[1]}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":3,"id":"é"}"#,
        // Keys and values read in place: escaped spellings are decoded before they are compared or matched.
        #"{"command_type":"end_workout","id":"1"}"#, #"{"command_type":"share_workout","service":"twitter"}"#,
        #"{"command_type":"share_workout","service":"twitte"}"#,
        #"{"command_type":"share_workout","service":"twitterx"}"#,
        #"{"command_type":"start_workout","location":"X","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"end_workout","command_type":"end_workout"}"#,
        #"{"command_type":"end_workout","id":1,"id":2}"#,
        #"{"command_type":"end_workout","é":1,"é":2}"#, #"{"command_type":"end_workout","é":1,"é":2}"#,
        #"{"command_type":"end_workout","id":"lane — 4"}"#, #"{"command_type":"end_workout","ID":1,"Id":2}"#,
        #"{"command_type":"start_workout","location":"Gym","date":"2020-03-16T19:45:13.25+01:00","intensityLevel":10,"id":"w-1"}"#,
        // Forbidden characters and the limits of location and id, escaped and raw.
        #"{"command_type":"start_workout","location":"Gym\u001b[31mRED\u001b[0m\rFAKE","date":"2020-03-16 19:45:13 +0000","intensityLevel":3,"id":1}"#,
        "{\"command_type\":\"start_workout\",\"location\":\"Gym\u{7F}\",\"date\":\"2020-03-16 19:45:13 +0000\",\"intensityLevel\":3,\"id\":1}",
        "{\"command_type\":\"start_workout\",\"location\":\"Gym\u{85}\u{202E}\",\"date\":\"2020-03-16 19:45:13 +0000\",\"intensityLevel\":3}",
        #"{"command_type":"start_workout","location":"abc\u2066x\u2069","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"\u200fabc","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        #"{"command_type":"start_workout","location":"x\u2028y","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}"#,
        "{\"command_type\":\"start_workout\",\"location\":\"" + String(repeating: "é", count: 256)
            + "\",\"date\":\"2020-03-16 19:45:13 +0000\",\"intensityLevel\":3}",
        "{\"command_type\":\"start_workout\",\"location\":\"" + String(repeating: "é", count: 257)
            + "\",\"date\":\"2020-03-16 19:45:13 +0000\",\"intensityLevel\":3}",
        "{\"command_type\":\"start_workout\",\"location\":\"e" + String(repeating: "\u{301}", count: 300)
            + "\",\"date\":\"2020-03-16 19:45:13 +0000\",\"intensityLevel\":3}",
        "{\"command_type\":\"end_workout\",\"id\":\"" + String(repeating: "a", count: 128) + "\"}",
        "{\"command_type\":\"end_workout\",\"id\":\"" + String(repeating: "a", count: 129) + "\"}",
        #"{"command_type":"end_workout","id":"a\u001bb"}"#, "{\"command_type\":\"end_workout\",\"id\":\"a\u{202E}b\"}",
        "{\"command_type\":\"share_workout\",\"service\":\"myspace\",\"id\":\"" + String(repeating: "a", count: 129)
            + "\"}",
        // More members than the parser keeps in place: the rest, their keys and duplicates, read the same.
        #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"command_type":"end_workout","id":"late"}"#,
        #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"command_type":"share_workout","service":"twitter","id":9}"#,
        #"{"command_type":"end_workout","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"a":9}"#,
        #"{"command_type":"end_workout","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"i":10}"#,
        #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12}"#,
    ]

    private func foundation(_ line: [UInt8]) -> DecodedLine {
        do {
            return try JSONDecoder().decode(DecodedLine.self, from: Data(line))
        } catch {
            return DecodedLine(id: nil, command: .failure(ProtocolError(decoding: error)))
        }
    }

    @Test("same command or same error, id included", arguments: lines)
    func sameAsFoundation(line: String) {
        let bytes = Array(line.utf8)
        // Lines that are not strict JSON never reach either decoder: they are malformed_json with the reason.
        if let error = bytes.withUnsafeBufferPointer(StrictJSONValidator.validate) {
            #expect(
                CommandLineDecoder().decode(bytes) == DecodedLine(id: nil, command: .failure(.malformedJSON(error)))
            )
            return
        }
        #expect(CommandLineDecoder().decode(bytes) == foundation(bytes))
    }

    @Test("deep nesting and invalid UTF-8 are malformed_json, without a crash")
    func hostileLines() {
        let deep = CommandLineDecoder().decode(Array(String(repeating: "[", count: 100_000).utf8))
        #expect((try? deep.command.get()) == nil)
        if case .failure(let error) = deep.command { #expect(error.code == .malformedJSON) }
        let invalid = CommandLineDecoder().decode(
            Array(#"{"command_type":"end_workout","x":""#.utf8) + [0xFF, 0x22, 0x7D]
        )
        if case .failure(let error) = invalid.command {
            #expect(error.code == .malformedJSON)
        } else {
            Issue.record("decoded invalid UTF-8")
        }
    }
}

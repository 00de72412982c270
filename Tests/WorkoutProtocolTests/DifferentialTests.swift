import Foundation
import Testing
import WorkoutProtocol

/// The decoder against a strict reference reader on 100,000 seeded random mutations of valid commands.
///
/// The reference is Python's `json`, made strict (see Tests/Differential/mutations.py): every line it refuses gets
/// `malformed_json`, and no line it accepts as an object does.
@Suite("Differential: malformed_json agrees with a strict reference reader")
struct DifferentialTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Differential/mutations.py").standardized

    struct Case {
        var verdict: UInt8
        var line: [UInt8]
    }

    /// Runs the generator and reads its records: verdict byte, 4-byte big-endian length, line.
    static func cases(seed: Int, count: Int) throws -> [Case] {
        let directory = try FileManager.default.url(
            for: .itemReplacementDirectory,
            in: .userDomainMask,
            appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()),
            create: true
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("mutations.bin")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, String(seed), String(count), output.path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "mutations.py failed")
        let data = [UInt8](try Data(contentsOf: output))
        var cases: [Case] = []
        var index = 0
        while index + 5 <= data.count {
            let length = data[index + 1..<index + 5].reduce(0) { $0 << 8 | Int($1) }
            cases.append(Case(verdict: data[index], line: Array(data[index + 5..<index + 5 + length])))
            index += 5 + length
        }
        return cases
    }

    @Test("100,000 mutations: malformed_json exactly when the reference refuses the line", arguments: [20_261_123])
    func mutationsAgree(seed: Int) throws {
        let cases = try Self.cases(seed: seed, count: 100_000)
        #expect(cases.count >= 100_000)
        let decoder = CommandLineDecoder()
        var disagreements: [String] = []
        var refused = 0
        for item in cases {
            let reply = decoder.decode(item.line)
            let error: ProtocolError? = if case .failure(let error) = reply.command { error } else { nil }
            let malformed = error?.code == .malformedJSON
            let agrees =
                switch item.verdict {
                case UInt8(ascii: "M"): malformed && error?.message.hasPrefix("The line is not valid JSON: ") == true
                case UInt8(ascii: "N"): malformed && error?.message.hasPrefix("The line must be a JSON object") == true
                default: !malformed
                }
            if item.verdict == UInt8(ascii: "M") { refused += 1 }
            if !agrees, disagreements.count < 20 {
                let shown = item.line.map {
                    $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0)
                }.joined()
                disagreements.append(
                    "reference \(UnicodeScalar(item.verdict)), daemon \(error.map { "\($0.code.rawValue): \($0.message)" } ?? "ok"): \(shown)"
                )
            }
        }
        // The mutations must exercise both sides, or agreement proves little.
        #expect(refused > cases.count / 4 && refused < cases.count * 9 / 10)
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    }
}

import Foundation

/// A recorded device session: bytes the wearable sends and the reply lines it must get back.
/// The format is described in `Tests/Transcripts/README.md`.
struct Transcript {
    enum Step {
        /// One write to the device.
        case send([UInt8])
        /// The next reply line must match.
        case expect(ReplyPattern, line: Int)
    }

    let name: String
    let steps: [Step]

    /// The folder of transcripts, beside this test target.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Transcripts")

    /// Every `*.transcript` file in ``folder``, by name.
    static func names() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return files.filter { $0.hasSuffix(".transcript") }.sorted()
    }

    init(named name: String) throws {
        let text = try String(contentsOf: Transcript.folder.appendingPathComponent(name), encoding: .utf8)
        try self.init(name: name, text: text)
    }

    init(name: String, text: String) throws {
        self.name = name
        var steps: [Step] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            let number = index + 1
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix(">> ") || line == ">>" {
                steps.append(.send(try Self.unescape(line.dropFirst(3), line: number)))
            } else if line.hasPrefix("> ") || line == ">" {
                steps.append(.send(try Self.unescape(line.dropFirst(2), line: number) + [UInt8(ascii: "\n")]))
            } else if line.hasPrefix("< ") {
                do {
                    steps.append(.expect(try ReplyPattern(String(line.dropFirst(2))), line: number))
                } catch {
                    throw TranscriptError("\(name):\(number): the expected reply is not JSON: \(error)")
                }
            } else {
                throw TranscriptError("\(name):\(number): a line must start with '> ', '>> ', '< ' or '#'")
            }
        }
        self.steps = steps
    }

    /// `\\`, `\r`, `\n`, `\t`, `\xHH` (one byte) and `\{TEXT*COUNT}` (TEXT repeated COUNT times).
    static func unescape(_ text: Substring, line: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = text[...]
        while let backslash = rest.firstIndex(of: "\\") {
            bytes += Array(rest[..<backslash].utf8)
            rest = rest[rest.index(after: backslash)...]
            guard let kind = rest.first else { throw TranscriptError("line \(line): a '\\' ends the line") }
            rest = rest.dropFirst()
            switch kind {
            case "\\": bytes.append(UInt8(ascii: "\\"))
            case "r": bytes.append(UInt8(ascii: "\r"))
            case "n": bytes.append(UInt8(ascii: "\n"))
            case "t": bytes.append(UInt8(ascii: "\t"))
            case "x":
                guard rest.count >= 2, let byte = UInt8(rest.prefix(2), radix: 16) else {
                    throw TranscriptError("line \(line): '\\x' needs two hex digits")
                }
                bytes.append(byte)
                rest = rest.dropFirst(2)
            case "{":
                guard let close = rest.firstIndex(of: "}"), let star = rest[..<close].lastIndex(of: "*"),
                    let count = Int(rest[rest.index(after: star)..<close]), count >= 0
                else {
                    throw TranscriptError("line \(line): a repetition is written \\{TEXT*COUNT}")
                }
                bytes += Array(repeating: Array(rest[..<star].utf8), count: count).joined()
                rest = rest[rest.index(after: close)...]
            default:
                throw TranscriptError("line \(line): unknown escape '\\\(kind)'")
            }
        }
        return bytes + Array(rest.utf8)
    }
}

/// A transcript that cannot be read, or a replay that went differently.
struct TranscriptError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

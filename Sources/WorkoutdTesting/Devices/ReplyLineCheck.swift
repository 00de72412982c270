import Foundation
import WorkoutProtocol

/// The shape every reply line must have, checked on the bytes a wearable would receive.
public enum ReplyLineCheck {
    /// A reply line as a wearable reads it: its status and, for an error, its code.
    public struct Summary: Hashable, Sendable {
        public var isSuccess: Bool
        public var errorCode: ErrorCode?
    }

    /// Checks that `line` is exactly one line of compact JSON.
    ///
    /// An object whose `status` is `ok` or `error`, an error carrying a known `code` and a non-empty `message`. Throws
    /// a sentence saying what is wrong otherwise.
    public static func summary(of line: [UInt8]) throws(ReplyLineError) -> Summary {
        guard line.last == UInt8(ascii: "\n") else { throw ReplyLineError("does not end in LF", line) }
        let body = line.dropLast()
        guard !body.contains(UInt8(ascii: "\n")), !body.contains(UInt8(ascii: "\r")) else {
            throw ReplyLineError("spans more than one line", line)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw ReplyLineError("is not a JSON object", line)
        }
        switch object["status"] as? String {
        case "ok":
            guard object["command_type"] is String, object["error"] == nil else {
                throw ReplyLineError("is ok without a command_type, or with an error", line)
            }
            return Summary(isSuccess: true, errorCode: nil)
        case "error":
            guard let error = object["error"] as? [String: Any],
                let code = (error["code"] as? String).flatMap(ErrorCode.init(rawValue:)),
                let message = error["message"] as? String, !message.isEmpty
            else {
                throw ReplyLineError("is an error without a known code and a message", line)
            }
            return Summary(isSuccess: false, errorCode: code)
        default:
            throw ReplyLineError("has no status ok or error", line)
        }
    }
}

/// A reply line that breaks the protocol, with the line itself for the report.
public struct ReplyLineError: Error, CustomStringConvertible, Sendable {
    public var problem: String
    public var line: [UInt8]

    init(_ problem: String, _ line: [UInt8]) {
        self.problem = problem
        self.line = line
    }

    public var description: String {
        "reply \(problem): \(String(decoding: line.prefix(300), as: UTF8.self))"
    }
}

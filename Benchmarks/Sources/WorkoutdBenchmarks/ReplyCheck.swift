import Foundation
import WorkoutProtocol

/// Checks, after a measurement, that every command got exactly one successful reply, in order.
enum ReplyCheck {
    /// Throws a sentence naming the first reply that is missing, extra or wrong. With `matchIDs`
    /// (a real daemon) each reply must also echo its command's id and type; the echo baseline's
    /// fixed reply only has to be a successful reply.
    static func verify(_ replies: [UInt8], against commands: [CommandMix.Entry], matchIDs: Bool) throws {
        let lines = replies.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
        guard lines.count == commands.count else {
            throw CheckError("expected \(commands.count) replies, got \(lines.count)")
        }
        let decoder = JSONDecoder()
        for (index, (line, command)) in zip(lines, commands).enumerated() {
            let text = String(decoding: line, as: UTF8.self)
            let reply: Reply
            do {
                reply = try decoder.decode(Reply.self, from: Data(line))
            } catch {
                throw CheckError("reply \(index + 1) is not a reply: \(text)")
            }
            guard case .ok(let acknowledgement) = reply.outcome else {
                throw CheckError("reply \(index + 1) is not \"status\":\"ok\": \(text)")
            }
            if matchIDs && (reply.id != command.id || acknowledgement.commandType != command.type) {
                throw CheckError(
                    "reply \(index + 1) does not answer \(command.type.rawValue) id \(command.id): \(text)"
                )
            }
        }
    }
}

/// A reply that fails ``ReplyCheck``.
struct CheckError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import StrictJSON
import WorkoutProtocol

/// The JSON text of values kept in TEXT columns: command ids, session states, replies.
///
/// A command id is stored as JSON so `7` and `"7"` stay different ids, as they are on the wire.
enum StoredJSON {
    static func encode<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try JSONEncoder.compactSorted(iso8601Dates: false).encode(value), as: UTF8.self)
    }

    /// A command id's text: its wire JSON (`JSONEncoder` writes the same for every id a wearable can send).
    static func text(of id: CommandID) -> String {
        id.jsonText
    }

    /// A reply's text: its wire line without the newline, `replayed` cleared. Written per command, so not
    /// through `JSONEncoder`; any JSON text decodes back the same.
    static func text(of reply: Reply) -> String {
        var reply = reply
        reply.replayed = false
        return String(decoding: ReplyEncoder().encodeLine(reply).dropLast(), as: UTF8.self)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from text: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}

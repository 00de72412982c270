import Foundation

/// The JSON text of values kept in TEXT columns: command ids, session states, replies.
///
/// A command id is stored as JSON so `7` and `"7"` stay different ids, as they are on the wire.
enum StoredJSON {
    static func encode<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from text: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}

/// A `Decoder` over a ``FlatJSONObject``: decodes a command line without Foundation's `JSONDecoder`.
///
/// Its errors are the ones `JSONDecoder` throws for the same object (kind, type and coding path), since
/// ``ProtocolError/init(decoding:)`` turns them into the reply: a missing key is `keyNotFound`, a value of
/// the wrong kind `typeMismatch`, a `null` where a value is required `valueNotFound`.
package struct FlatJSONDecoder: Decoder {
    private enum Node {
        case object(FlatJSONObject)
        case value(FlatJSONObject.Value)
    }

    private let node: Node
    package let codingPath: [any CodingKey]
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package init(_ object: FlatJSONObject) {
        node = .object(object)
        codingPath = []
    }

    fileprivate init(_ value: FlatJSONObject.Value, codingPath: [any CodingKey]) {
        node = .value(value)
        self.codingPath = codingPath
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = node else {
            throw mismatch([String: Any].self, "Expected to decode a dictionary but found a scalar.")
        }
        return KeyedDecodingContainer(FlatKeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw mismatch([Any].self, "Expected to decode an array but found \(kind).")
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer {
        FlatSingleValueContainer(decoder: self)
    }

    private var kind: String {
        switch node {
        case .object: "a dictionary"
        case .value: "a scalar"
        }
    }

    fileprivate func mismatch(_ type: Any.Type, _ description: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: description))
    }

    /// The scalar this decoder holds, as `T`.
    fileprivate func scalar<T>(_ type: T.Type, _ convert: (FlatJSONObject.Value) -> T?) throws -> T {
        guard case .value(let value) = node else {
            throw mismatch(type, "Expected to decode \(type) but found a dictionary instead.")
        }
        if case .null = value {
            throw DecodingError.valueNotFound(
                type,
                .init(codingPath: codingPath, debugDescription: "Expected \(type) value but found null instead.")
            )
        }
        guard let converted = convert(value) else {
            if case .integer(let number) = value, T.self is any FixedWidthInteger.Type {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: codingPath,
                        debugDescription: "Parsed JSON number <\(number)> does not fit in \(type)."
                    )
                )
            }
            throw mismatch(type, "Expected to decode \(type) but found another kind of value instead.")
        }
        return converted
    }

    fileprivate var isNull: Bool {
        if case .value(.null) = node { return true }
        return false
    }
}

private struct FlatKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: FlatJSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func decoder(for key: Key) throws -> FlatJSONDecoder {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key,
                .init(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key \(key.stringValue)."
                )
            )
        }
        return FlatJSONDecoder(value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try decoder(for: key).isNull
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if let value = object[key.stringValue], let direct = Self.direct(type, from: value) { return direct }
        return try T(from: decoder(for: key))
    }

    /// A ``FlatScalarDecodable`` type made straight from the parsed value.
    ///
    /// Nil for every other type, and for a value the type's own `init(from:)` would reject (so the error still comes
    /// from there).
    private static func direct<T>(_ type: T.Type, from value: FlatJSONObject.Value) -> T? {
        // A transformer's input arrives here generically; a string is the common case (the date).
        if type == String.self {
            if case .string(let string) = value { return string as? T }
            return nil
        }
        guard let scalar = type as? any FlatScalarDecodable.Type else { return nil }
        return scalar.init(flatValue: value) as? T
    }

    // The scalars a command reads, straight from the parsed value: the generic path builds a decoder, a
    // key path and a boxed single-value container for each. Any failure goes the generic way, so the
    // error is the one it would have been.
    /// The generic path, for a value the fast path did not take: its result or its error.
    private func generic<V: Decodable>(_ type: V.Type, forKey key: Key) throws -> V {
        try V(from: decoder(for: key))
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        if case .string(let value) = object[key.stringValue] { return value }
        return try generic(type, forKey: key)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        if case .integer(let value) = object[key.stringValue] { return Double(value) }
        return try generic(type, forKey: key)
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        if case .integer(let value) = object[key.stringValue], let exact = Int(exactly: value) { return exact }
        return try generic(type, forKey: key)
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        if case .integer(let value) = object[key.stringValue] { return value }
        return try generic(type, forKey: key)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        if case .bool(let value) = object[key.stringValue] { return value }
        return try generic(type, forKey: key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue] else { return nil }
        if case .null = value { return nil }
        if let direct = Self.direct(type, from: value) { return direct }
        return try T(from: FlatJSONDecoder(value, codingPath: codingPath + [key]))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        throw DecodingError.keyNotFound(
            FlatSuperKey(),
            .init(codingPath: codingPath, debugDescription: "No value associated with key super.")
        )
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try decoder(for: key)
    }
}

/// A type that ``FlatJSONDecoder`` may make directly from a parsed scalar.
///
/// It skips `init(from:)`, and with it a decoder, a key path and a boxed container per value. The result must be
/// exactly what `init(from:)` returns for that value; where `init(from:)` would throw, return nil.
package protocol FlatScalarDecodable {
    init?(flatValue: FlatJSONObject.Value)
}

/// The key `superDecoder()` looks up, as in Foundation.
private struct FlatSuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}

private struct FlatSingleValueContainer: SingleValueDecodingContainer {
    let decoder: FlatJSONDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        try decoder.scalar(type) { if case .bool(let value) = $0 { value } else { nil } }
    }

    func decode(_ type: String.Type) throws -> String {
        try decoder.scalar(type) { if case .string(let value) = $0 { value } else { nil } }
    }

    func decode(_ type: Double.Type) throws -> Double { try floatingPoint(type) }
    func decode(_ type: Float.Type) throws -> Float { try floatingPoint(type) }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: decoder)
    }

    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        // Out of range for `T` surfaces as dataCorrupted, as in Foundation (`scalar` tells the two apart).
        try decoder.scalar(type) { if case .integer(let value) = $0 { T(exactly: value) } else { nil } }
    }

    private func floatingPoint<T: BinaryFloatingPoint>(_ type: T.Type) throws -> T {
        try decoder.scalar(type) { if case .integer(let value) = $0 { T(value) } else { nil } }
    }
}

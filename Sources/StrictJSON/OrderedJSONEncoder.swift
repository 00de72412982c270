/// A JSON `Encoder` that writes compact JSON straight into bytes, keys in the order they are encoded.
///
/// Replies are written once per command; Foundation's `JSONEncoder` builds a tree of boxed values and,
/// for a repeatable order, sorts every object's keys. Writing in encoding order takes one pass and gives
/// a deterministic order that follows the type's `encode(to:)`, so a ``Reply`` starts with `"status"`.
/// Slashes are not escaped; everything else is escaped as JSON requires. Containers must be used the
/// way Codable types use them, innermost first; writing into a container after its parent moved on
/// throws rather than producing broken JSON.
public struct OrderedJSONEncoder: Sendable {
    public init() {}

    /// The JSON text of `value`, without a trailing newline.
    public func encode(_ value: some Encodable) throws -> [UInt8] {
        let output = JSONOutput()
        try output.encodeValue(value, codingPath: [])
        if let misuse = output.misuse {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: misuse))
        }
        return output.bytes
    }
}

/// The bytes of one encoding and the stack of objects and arrays still open in them.
final class JSONOutput {
    private struct Frame {
        var id: Int
        var closer: UInt8
        var hasMembers = false
    }

    private(set) var bytes: [UInt8] = []
    private var open: [Frame] = []
    private var lastID = 0
    /// Set when a container was used out of order; the encoding then fails as a whole.
    private(set) var misuse: String?

    init() {
        bytes.reserveCapacity(128)
    }

    /// Encodes a value where one is expected, closing whatever containers it opened.
    func encodeValue(_ value: some Encodable, codingPath: [any CodingKey]) throws {
        let depth = open.count
        let encoder = StreamingEncoder(output: self, codingPath: codingPath)
        try value.encode(to: encoder)
        guard encoder.hasWritten else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: codingPath, debugDescription: "\(type(of: value)) encoded no value.")
            )
        }
        close(downTo: depth)
    }

    /// Writes `{` or `[` and returns the new container's id.
    func openContainer(object: Bool) -> Int {
        lastID += 1
        bytes.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        open.append(Frame(id: lastID, closer: object ? UInt8(ascii: "}") : UInt8(ascii: "]")))
        return lastID
    }

    /// Prepares for the next member of container `id`: closes containers nested in it, writes a comma.
    /// Returns false (and records the misuse) when `id` is no longer open.
    func beginMember(of id: Int) -> Bool {
        guard let index = open.lastIndex(where: { $0.id == id }) else {
            misuse = misuse ?? "a container was written to after it was closed"
            return false
        }
        close(downTo: index + 1)
        if open[index].hasMembers { bytes.append(UInt8(ascii: ",")) }
        open[index].hasMembers = true
        return true
    }

    func recordMisuse(_ description: String) {
        misuse = misuse ?? description
    }

    private func close(downTo depth: Int) {
        while open.count > depth {
            bytes.append(open.removeLast().closer)
        }
    }

    func writeKey(_ key: some CodingKey) {
        writeString(key.stringValue)
        bytes.append(UInt8(ascii: ":"))
    }

    func writeLiteral(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    func writeString(_ string: String) {
        JSONText.appendString(string, to: &bytes)
    }

    func writeInteger(_ value: some FixedWidthInteger) {
        JSONText.appendInteger(value, to: &bytes)
    }

    func writeDouble(_ value: Double, codingPath: [any CodingKey]) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: codingPath, debugDescription: "JSON has no \(value).")
            )
        }
        JSONText.appendFiniteDouble(value, to: &bytes)
    }
}

/// The `Encoder` handed to one value: whatever container it asks for writes into the shared output.
final class StreamingEncoder: Encoder {
    let output: JSONOutput
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// The object or array this value opened.
    ///
    /// Asked again (a payload encoding itself beside its parent's keys, as `Command` does), the same one is continued.
    private var containerID: Int?
    /// Whether the value has written anything: a container or a single value.
    private(set) var hasWritten = false

    init(output: JSONOutput, codingPath: [any CodingKey]) {
        self.output = output
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(
            KeyedStreamingContainer<Key>(output: output, id: openContainer(object: true), codingPath: codingPath)
        )
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedStreamingContainer(output: output, id: openContainer(object: false), codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueStreamingContainer(encoder: self)
    }

    private func openContainer(object: Bool) -> Int {
        if let containerID { return containerID }
        if hasWritten { output.recordMisuse("a value asked for a container after writing a single value") }
        let id = output.openContainer(object: object)
        containerID = id
        hasWritten = true
        return id
    }

    /// Claims the single value slot; false (and a recorded misuse) if something was written already.
    func beginSingleValue() -> Bool {
        guard !hasWritten else {
            output.recordMisuse("a single value container was written to twice")
            return false
        }
        hasWritten = true
        return true
    }
}

/// The members of one JSON object.
struct KeyedStreamingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let output: JSONOutput
    let id: Int
    let codingPath: [any CodingKey]

    /// Writes `"key":` when this object may still take a member.
    private func member(_ key: Key) -> Bool {
        guard output.beginMember(of: id) else { return false }
        output.writeKey(key)
        return true
    }

    mutating func encodeNil(forKey key: Key) throws { if member(key) { output.writeLiteral("null") } }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        if member(key) { output.writeLiteral(value ? "true" : "false") }
    }
    mutating func encode(_ value: String, forKey key: Key) throws { if member(key) { output.writeString(value) } }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        if member(key) { try output.writeDouble(value, codingPath: codingPath + [key]) }
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        if member(key) { try output.writeDouble(Double(value), codingPath: codingPath + [key]) }
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { if member(key) { output.writeInteger(value) } }
    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        if member(key) { try output.encodeValue(value, codingPath: codingPath + [key]) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        _ = member(key)
        return KeyedEncodingContainer(
            KeyedStreamingContainer<NestedKey>(
                output: output,
                id: output.openContainer(object: true),
                codingPath: codingPath + [key]
            )
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        _ = member(key)
        return UnkeyedStreamingContainer(
            output: output,
            id: output.openContainer(object: false),
            codingPath: codingPath + [key]
        )
    }

    mutating func superEncoder() -> any Encoder { unsupportedSuperEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { unsupportedSuperEncoder() }

    /// A super encoder may write nothing, which a stream cannot take back: refused, the encoding fails.
    private func unsupportedSuperEncoder() -> any Encoder {
        output.recordMisuse("OrderedJSONEncoder does not support superEncoder()")
        return StreamingEncoder(output: JSONOutput(), codingPath: codingPath)
    }
}

/// The elements of one JSON array.
struct UnkeyedStreamingContainer: UnkeyedEncodingContainer {
    let output: JSONOutput
    let id: Int
    let codingPath: [any CodingKey]
    private(set) var count = 0

    init(output: JSONOutput, id: Int, codingPath: [any CodingKey]) {
        self.output = output
        self.id = id
        self.codingPath = codingPath
    }

    private mutating func element() -> Bool {
        count += 1
        return output.beginMember(of: id)
    }

    private var elementPath: [any CodingKey] { codingPath + [IndexKey(count - 1)] }

    mutating func encodeNil() throws { if element() { output.writeLiteral("null") } }
    mutating func encode(_ value: Bool) throws { if element() { output.writeLiteral(value ? "true" : "false") } }
    mutating func encode(_ value: String) throws { if element() { output.writeString(value) } }
    mutating func encode(_ value: Double) throws {
        if element() { try output.writeDouble(value, codingPath: elementPath) }
    }
    mutating func encode(_ value: Float) throws {
        if element() { try output.writeDouble(Double(value), codingPath: elementPath) }
    }
    mutating func encode(_ value: Int) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: Int8) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: Int16) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: Int32) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: Int64) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt8) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt16) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt32) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt64) throws { if element() { output.writeInteger(value) } }
    mutating func encode(_ value: some Encodable) throws {
        if element() { try output.encodeValue(value, codingPath: elementPath) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        _ = element()
        return KeyedEncodingContainer(
            KeyedStreamingContainer<NestedKey>(
                output: output,
                id: output.openContainer(object: true),
                codingPath: elementPath
            )
        )
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        _ = element()
        return UnkeyedStreamingContainer(
            output: output,
            id: output.openContainer(object: false),
            codingPath: elementPath
        )
    }

    mutating func superEncoder() -> any Encoder {
        output.recordMisuse("OrderedJSONEncoder does not support superEncoder()")
        return StreamingEncoder(output: JSONOutput(), codingPath: codingPath)
    }
}

/// A value that is not an object or an array.
struct SingleValueStreamingContainer: SingleValueEncodingContainer {
    let encoder: StreamingEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var output: JSONOutput { encoder.output }

    mutating func encodeNil() throws { if encoder.beginSingleValue() { output.writeLiteral("null") } }
    mutating func encode(_ value: Bool) throws {
        if encoder.beginSingleValue() { output.writeLiteral(value ? "true" : "false") }
    }
    mutating func encode(_ value: String) throws { if encoder.beginSingleValue() { output.writeString(value) } }
    mutating func encode(_ value: Double) throws {
        if encoder.beginSingleValue() { try output.writeDouble(value, codingPath: codingPath) }
    }
    mutating func encode(_ value: Float) throws {
        if encoder.beginSingleValue() { try output.writeDouble(Double(value), codingPath: codingPath) }
    }
    mutating func encode(_ value: Int) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: Int8) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: Int16) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: Int32) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: Int64) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt8) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt16) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt32) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: UInt64) throws { if encoder.beginSingleValue() { output.writeInteger(value) } }
    mutating func encode(_ value: some Encodable) throws {
        // The nested value shares this encoder: a RawRepresentable writes its raw value here, a struct opens a container.
        try value.encode(to: encoder)
    }
}

/// The coding key of an array element.
struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

import Foundation

/// A JSON object whose members are all scalars, parsed from one line in one pass and read in place.
///
/// The fast path of ``CommandLineDecoder``: every command on the wire is such an object. The parser
/// accepts only a strict subset of what Foundation's `JSONDecoder` accepts (no nested values, no
/// duplicate keys, integers only as plain literals that fit in `Int64`, no `-0`), and returns nil for
/// anything else, so everything outside the subset (including every malformed line) still gets
/// exactly Foundation's behaviour and errors.
///
/// Keys and string values are kept as places in the line, not as `String`s: a command's keys are only
/// compared, and of its values only the location and a string id become strings (making each key and
/// value a `String` was most of a command's decoding time). So the object reads the line's bytes: it is
/// made and used inside ``CommandLineDecoder/decode(_:)`` and must not outlive them.
package struct FlatJSONObject {
    /// A member's value, its string made (escapes resolved).
    package enum Value {
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case null
    }

    /// A member's value as parsed: a string is still its place in the line.
    package enum RawValue {
        case string(Text)
        case integer(Int64)
        case bool(Bool)
        case null
    }

    /// A string's bytes between its quotes. `plain` when they are ASCII without escapes, so the bytes are the
    /// text; otherwise they are decoded before they are compared.
    package struct Text {
        var range: Range<Int>
        package var plain: Bool
    }

    private struct Member {
        var key: Text
        var value: RawValue

        static let empty = Member(key: Text(range: 0..<0, plain: true), value: .null)
    }

    /// The members in the line's order: a command's few in place, any beyond them in an array.
    ///
    /// Kept in place rather than in an array because the array was one allocation per command line.
    private struct Members {
        /// Room for more members than any command has keys.
        private typealias InPlace = InlineArray<8, Member>
        private static var inPlaceCapacity: Int { InPlace.count }

        private var inPlace = InPlace(repeating: .empty)
        private var beyond: [Member] = []
        private(set) var count = 0

        subscript(index: Int) -> Member {
            index < Self.inPlaceCapacity ? inPlace[index] : beyond[index - Self.inPlaceCapacity]
        }

        mutating func append(_ member: Member) {
            if count < Self.inPlaceCapacity {
                inPlace[count] = member
            } else {
                beyond.append(member)
            }
            count += 1
        }

        func contains(where matches: (Member) -> Bool) -> Bool {
            for index in 0..<count where matches(self[index]) { return true }
            return false
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    /// In the line's order; a command has a handful, so lookups scan.
    private var members = Members()
    /// Whether every byte of the line is ASCII. The flat grammar is a subset of JSON's, and UTF-8 is the one
    /// thing the parser does not check (it takes string contents as they are), so an ASCII line it accepts
    /// is valid JSON without the validator's pass.
    package private(set) var isASCII = true

    /// Nil when `bytes` is not a flat object in the accepted subset (valid JSON or not).
    package init?(parsing bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        reader.skipWhitespace()
        if !reader.take(UInt8(ascii: "}")) {
            repeat {
                reader.skipWhitespace()
                guard let key = reader.string() else { return nil }
                reader.skipWhitespace()
                guard reader.take(UInt8(ascii: ":")) else { return nil }
                reader.skipWhitespace()
                guard let value = reader.scalar(), !members.contains(where: { same($0.key, key) }) else { return nil }
                members.append(Member(key: key, value: value))
                reader.skipWhitespace()
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "}")) else { return nil }
        }
        reader.skipWhitespace()
        guard reader.atEnd else { return nil }
        // Outside strings the parser accepts ASCII only, so their bytes decide.
        isASCII = reader.stringBits < 0x80
    }

    // MARK: Reading members

    /// The value of `key` as parsed, whichever spelling of the key the line used.
    ///
    /// A key spelled with escapes or other characters that denote it counts too.
    package func parsed(_ key: StaticString) -> RawValue? {
        let name = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        for index in 0..<members.count {
            let member = members[index]
            if member.key.plain ? equal(member.key.range, name) : string(member.key) == key.description {
                return member.value
            }
        }
        return nil
    }

    /// The value of `key`, its string made: for ``FlatJSONDecoder``, whose keys are any `CodingKey`.
    package subscript(key: String) -> Value? {
        for index in 0..<members.count where string(members[index].key) == key { return value(members[index].value) }
        return nil
    }

    /// The keys, in the line's order.
    package var keys: [String] { (0..<members.count).map { string(members[$0].key) } }

    /// The text a parsed string denotes.
    package func string(_ text: Text) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[text.range])
        if text.plain { return String(decoding: slice, as: UTF8.self) }
        // Parsing already checked the escapes, so decoding them cannot fail.
        var reader = Reader(bytes: slice)
        return reader.decodedContents() ?? String(decoding: slice, as: UTF8.self)
    }

    package func value(_ raw: RawValue) -> Value {
        switch raw {
        case .string(let text): .string(string(text))
        case .integer(let value): .integer(value)
        case .bool(let value): .bool(value)
        case .null: .null
        }
    }

    /// Calls `body` with the UTF-8 of the text a parsed string denotes.
    ///
    /// The line's own bytes when it is plain, so no `String` is made for it.
    package func withUTF8<R>(of text: Text, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if text.plain { return body(UnsafeBufferPointer(rebasing: bytes[text.range])) }
        var decoded = string(text)
        return decoded.withUTF8(body)
    }

    /// Calls `body` with a plain string's bytes (the text itself).
    ///
    /// Nil for a string with escapes or non-ASCII bytes, which the caller reads through ``string(_:)``.
    package func withPlainBytes<R>(of text: Text, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        text.plain ? withUTF8(of: text, body) : nil
    }

    /// Whether two keys denote the same text. `String` equality (canonical equivalence) where either is not
    /// plain, as the lookup by `String` has always compared; two plain keys are equal exactly when their bytes are.
    private func same(_ a: Text, _ b: Text) -> Bool {
        if a.plain && b.plain {
            return equal(a.range, UnsafeBufferPointer(rebasing: bytes[b.range]))
        }
        return string(a) == string(b)
    }

    private func equal(_ range: Range<Int>, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        UnsafeBufferPointer(rebasing: bytes[range]).sameBytes(as: other)
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether both hold the same bytes: `memcmp`, where `elementsEqual` walked them through iterators.
    package func sameBytes(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let base = baseAddress, let otherBase = other.baseAddress else { return true }
        return memcmp(base, otherBase, count) == 0
    }
}

/// A cursor over the line's bytes.
private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// Every byte read inside strings, OR-ed together: its top bit says whether one was not ASCII.
    private(set) var stringBits: UInt8 = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var atEnd: Bool { index == bytes.count }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func take(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    mutating func scalar() -> FlatJSONObject.RawValue? {
        switch current {
        case UInt8(ascii: "\""): string().map { .string($0) }
        case UInt8(ascii: "t"): literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): literal("null") ? .null : nil
        default: integer().map { .integer($0) }
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// A plain integer literal of at most 18 digits (so it fits in `Int64`), not `-0`.
    ///
    /// It is not followed by a fraction or exponent (those go to Foundation).
    private mutating func integer() -> Int64? {
        let negative = take(UInt8(ascii: "-"))
        let start = index
        var value: Int64 = 0
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            guard index - start < 18 else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"), !(negative && value == 0) else {
            return nil
        }
        if let byte = current, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            return nil
        }
        return negative ? -value : value
    }

    /// The place of a string's contents; nil for control characters, bad escapes or lone surrogates.
    /// UTF-8 is not checked here (see ``FlatJSONObject/isASCII``).
    mutating func string() -> FlatJSONObject.Text? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        var bits: UInt8 = 0
        var escaped = false
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                stringBits |= bits
                return FlatJSONObject.Text(range: start..<index - 1, plain: !escaped && bits < 0x80)
            case UInt8(ascii: "\\"):
                index += 1
                guard escape() != nil else { return nil }
                escaped = true
            case 0..<0x20:
                return nil
            default:
                bits |= byte
                index += 1
            }
        }
        return nil
    }

    /// All of `bytes` as the contents of a string (already checked by ``string()``), escapes resolved.
    mutating func decodedContents() -> String? {
        // Built as UTF-8 bytes: appending to a `String.UnicodeScalarView` cost more than the rest of the line.
        var utf8: [UInt8] = []
        utf8.reserveCapacity(bytes.count)
        var run = index
        while let byte = current {
            if byte == UInt8(ascii: "\\") {
                utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                index += 1
                guard let scalar = escape() else { return nil }
                utf8.append(contentsOf: UTF8.encode(scalar) ?? UTF8.EncodedScalar())
                run = index
            } else {
                index += 1
            }
        }
        utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
        return String(decoding: utf8, as: UTF8.self)
    }

    /// The escape after a backslash.
    private mutating func escape() -> Unicode.Scalar? {
        guard let byte = current else { return nil }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(byte)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            guard let unit = hex4() else { return nil }
            if UTF16.isLeadSurrogate(unit) {
                guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let trail = hex4(),
                    UTF16.isTrailSurrogate(trail)
                else {
                    return nil
                }
                return Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(trail) - 0xDC00))
            }
            return Unicode.Scalar(unit)  // nil for a lone trail surrogate
        default:
            return nil
        }
    }

    private mutating func hex4() -> UInt16? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}

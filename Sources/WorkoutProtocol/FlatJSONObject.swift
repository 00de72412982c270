/// A JSON object whose members are all scalars, parsed from one line in a single pass.
///
/// The fast path of ``CommandLineDecoder``: every command on the wire is such an object. The parser
/// accepts only a strict subset of what Foundation's `JSONDecoder` accepts (no nested values, no
/// duplicate keys, integers only as plain literals that fit in `Int64`, no `-0`), and returns nil for
/// anything else, so everything outside the subset (including every malformed line) still gets
/// exactly Foundation's behaviour and errors.
struct FlatJSONObject {
    enum Value {
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case null
    }

    /// In the line's order; a command has a handful, so lookups scan.
    private(set) var members: [(key: String, value: Value)] = []

    subscript(key: String) -> Value? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// Nil when `bytes` is not a flat object in the accepted subset (valid JSON or not).
    init?(parsing bytes: UnsafeBufferPointer<UInt8>) {
        var reader = Reader(bytes: bytes)
        members.reserveCapacity(6)  // a command's keys, so the array is not grown key by key
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
                guard let value = reader.scalar(), self[key] == nil else { return nil }
                members.append((key, value))
                reader.skipWhitespace()
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "}")) else { return nil }
        }
        reader.skipWhitespace()
        guard reader.atEnd else { return nil }
    }
}

/// A cursor over the line's bytes.
private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

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

    mutating func scalar() -> FlatJSONObject.Value? {
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

    /// A plain integer literal of at most 18 digits (so it fits in `Int64`), not `-0`, and not
    /// followed by a fraction or exponent (those go to Foundation).
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
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"), !(negative && value == 0) else { return nil }
        if let byte = current, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            return nil
        }
        return negative ? -value : value
    }

    /// A string with its escapes resolved; nil for control characters, bad escapes or lone surrogates.
    /// The line was already checked to be UTF-8, so unescaped runs are copied as they are.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { return nil }
            index += 1
        }
        if take(UInt8(ascii: "\"")) {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
        }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self).unicodeScalars)
        return escapedRemainder(appendingTo: &scalars)
    }

    private mutating func escapedRemainder(appendingTo scalars: inout String.UnicodeScalarView) -> String? {
        var run = index
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[run..<index]), as: UTF8.self).unicodeScalars)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[run..<index]), as: UTF8.self).unicodeScalars)
                index += 1
                guard let scalar = escape() else { return nil }
                scalars.append(scalar)
                run = index
            case 0..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
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
                guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let trail = hex4(), UTF16.isTrailSurrogate(trail) else {
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

/// Why a line is not JSON: what was expected, at which byte (counting from 1), and what was there.
public struct JSONSyntaxError: Error, Hashable, Sendable {
    /// 1-based offset of the offending byte in the line; one past the end when the line stopped short.
    public var byte: Int
    public var expected: String
    /// What stood at `byte`, printable and short (`'n'`, `U+00E9`, `byte 0xFF`, `the end of the line`).
    ///
    /// Nil when `expected` already says it.
    public var found: String?

    public init(byte: Int, expected: String, found: String? = nil) {
        self.byte = byte
        self.expected = expected
        self.found = found
    }

    /// `expected a JSON object at byte 1, found 'n'`.
    public var description: String {
        guard let found else { return "\(expected) at byte \(byte)" }
        return "\(expected) at byte \(byte), found \(found)"
    }
}

/// Checks that a line is exactly one JSON text as RFC 8259 defines it.
///
/// It adds the I-JSON (RFC 7493) rule that an object has no duplicate keys, and a nesting limit.
///
/// Every line goes through here before anything reads it, so a command never runs from text that is not
/// JSON (a trailing comma, a bad escape in a key the command ignores). Checked in one pass, without
/// recursion (a line of `[[[[…` cannot exhaust the stack) and without heap allocation: the key table of
/// the open objects lives in a temporary stack buffer. UTF-8 is checked here too (overlong forms, UTF-16
/// surrogates and code points past U+10FFFF are rejected), so the decoders after it need not.
///
/// Lone surrogates written as `\u` escapes (`"\ud800"`) are rejected: RFC 8259 lets them through the
/// grammar but says their behaviour is unpredictable, and they cannot become a Swift `String`.
public enum StrictJSONValidator {
    /// Objects and arrays nest at most this deep; commands use one level.
    public static let maximumDepth = 64

    /// Nil when `bytes` is valid; otherwise the first error.
    public static func validate(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONSyntaxError? {
        // A key needs at least 4 bytes (`"":0`), so this many key slots are enough for any line.
        withUnsafeTemporaryAllocation(of: KeySlot.self, capacity: bytes.count / 4 + 1) { keys in
            var scanner = Scanner(bytes: bytes, keys: keys)
            return scanner.run()
        }
    }
}

/// A key of an open object: its raw bytes between the quotes, and the depth of the object holding it.
private struct KeySlot {
    var start: Int
    var end: Int
    var depth: Int
    var escaped: Bool
}

private struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let keys: UnsafeMutableBufferPointer<KeySlot>
    var keyCount = 0
    var index = 0
    /// Bit `d` set: the container at depth `d` (0-based) is an object; clear: an array.
    var objectBits: UInt64 = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, keys: UnsafeMutableBufferPointer<KeySlot>) {
        self.bytes = bytes
        self.keys = keys
    }

    private func fail(_ expected: String) -> JSONSyntaxError {
        JSONSyntaxError(byte: index + 1, expected: expected, found: found)
    }

    /// The byte at `index` for a message, shown as itself only when it is printable ASCII.
    ///
    /// The line is untrusted: anything else is named by its code point or byte value.
    private var found: String {
        guard let byte = current else { return "the end of the line" }
        switch byte {
        case UInt8(ascii: "'"): return "\"'\""
        case 0x20...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        case 0..<0x20, 0x7F: return "U+" + Self.hex(UInt32(byte), digits: 4)
        default:
            guard let length = Self.utf8SequenceLength(bytes, at: index) else {
                return "byte 0x" + Self.hex(UInt32(byte), digits: 2)
            }
            var value = UInt32(byte) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
            for k in 1..<length { value = value << 6 | UInt32(bytes[index + k] & 0x3F) }
            return "U+" + Self.hex(value, digits: 4)
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private var inObject: Bool { depth > 0 && objectBits & (1 << UInt64(depth - 1)) != 0 }

    mutating func run() -> JSONSyntaxError? {
        skipWhitespace()
        // A command line is an object; a bare value that is valid JSON is refused later, with its own message.
        if let error = value(expected: "expected a JSON object") { return error }
        while depth > 0 {
            // After a value inside a container: a comma and the next member, or the container's end.
            skipWhitespace()
            let object = inObject
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
                if object, let error = member(first: false) { return error }
                if !object, let error = value(expected: "expected a value after ','") { return error }
            case UInt8(ascii: "}") where object:
                index += 1
                closeObject()
            case UInt8(ascii: "]") where !object:
                index += 1
                depth -= 1
            default:
                return fail(object ? "expected ',' or '}' after a value" : "expected ',' or ']' after a value")
            }
        }
        skipWhitespace()
        guard index == bytes.count else { return fail("expected the end of the line after the JSON value") }
        return nil
    }

    /// A key, its colon and the start of its value (a container is left open for `run` to continue).
    private mutating func member(first: Bool) -> JSONSyntaxError? {
        guard current == UInt8(ascii: "\"") else {
            return fail(first ? "expected a string key or '}'" : "expected a string key after ','")
        }
        let start = index + 1
        var escaped = false
        if let error = string(escaped: &escaped) { return error }
        let slot = KeySlot(start: start, end: index - 1, depth: depth, escaped: escaped)
        var other = keyCount - 1
        while other >= 0, keys[other].depth == depth {
            if sameKey(keys[other], slot) {
                index = start - 1
                var error = fail("expected each key once (I-JSON), but \"\(text(of: slot))\" repeats")
                error.found = nil
                return error
            }
            other -= 1
        }
        keys[keyCount] = slot
        keyCount += 1
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { return fail("expected ':' after a key") }
        index += 1
        skipWhitespace()
        return value(expected: "expected a value after ':'")
    }

    private mutating func closeObject() {
        while keyCount > 0, keys[keyCount - 1].depth == depth { keyCount -= 1 }
        depth -= 1
    }

    /// One value; an object or array is opened (and its first member started) rather than read whole.
    private mutating func value(expected: String) -> JSONSyntaxError? {
        guard let byte = current else { return fail(expected) }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < StrictJSONValidator.maximumDepth else {
                return fail("expected nesting at most \(StrictJSONValidator.maximumDepth) levels deep")
            }
            index += 1
            let object = byte == UInt8(ascii: "{")
            if object { objectBits |= 1 << UInt64(depth) } else { objectBits &= ~(1 << UInt64(depth)) }
            depth += 1
            skipWhitespace()
            if object {
                if current == UInt8(ascii: "}") {
                    index += 1
                    depth -= 1
                    return nil
                }
                return member(first: true)
            }
            if current == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return nil
            }
            return value(expected: "expected a value or ']'")
        case UInt8(ascii: "\""):
            var escaped = false
            return string(escaped: &escaped)
        case UInt8(ascii: "t"): return literal("true", orElse: depth == 0 ? expected : nil)
        case UInt8(ascii: "f"): return literal("false", orElse: depth == 0 ? expected : nil)
        case UInt8(ascii: "n"): return literal("null", orElse: depth == 0 ? expected : nil)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return fail(expected)
        }
    }

    /// `word`; when it is not there, `orElse` (if given) is reported at the word's first byte instead.
    ///
    /// A line that is only a misspelt literal (`not json`) is better told what it should have been.
    private mutating func literal(_ word: StaticString, orElse: String?) -> JSONSyntaxError? {
        let count = word.utf8CodeUnitCount
        let start = index
        for offset in 0..<count {
            guard current == word.utf8Start[offset] else {
                guard let orElse else { return fail("expected '\(word)'") }
                index = start
                return fail(orElse)
            }
            index += 1
        }
        return nil
    }

    private mutating func digits() -> Int {
        let start = index
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    private mutating func number() -> JSONSyntaxError? {
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
            if let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                return fail("expected no digit after a leading zero")
            }
        } else if digits() == 0 {
            return fail("expected a digit")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return fail("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return fail("expected a digit in the exponent") }
        }
        return nil
    }

    /// A string from its opening quote to past its closing one.
    private mutating func string(escaped: inout Bool) -> JSONSyntaxError? {
        index += 1
        while index < bytes.count {
            let byte = bytes[index]
            // Most of a line is plain ASCII inside strings: one comparison chain per byte, no switch.
            if byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return nil
            case UInt8(ascii: "\\"):
                escaped = true
                index += 1
                if let error = escape() { return error }
            case 0..<0x20:
                return fail("expected control characters in a string to be escaped (\\n, \\u0000…)")
            case 0x20..<0x80:
                index += 1
            default:
                guard let length = Self.utf8SequenceLength(bytes, at: index) else {
                    return fail("expected valid UTF-8")
                }
                index += length
            }
        }
        return fail("expected '\"' to end the string")
    }

    private mutating func escape() -> JSONSyntaxError? {
        guard let byte = current else { return fail("expected an escape after '\\'") }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 1
            return nil
        case UInt8(ascii: "u"):
            index += 1
            guard let unit = hex4() else { return fail("expected 4 hex digits after '\\u'") }
            if UTF16.isTrailSurrogate(unit) {
                index -= 6
                return fail("expected a high surrogate before a low surrogate '\\u' escape")
            }
            guard UTF16.isLeadSurrogate(unit) else { return nil }
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                return fail("expected a '\\u' low surrogate after a high surrogate")
            }
            index += 2
            guard let trail = hex4() else { return fail("expected 4 hex digits after '\\u'") }
            guard UTF16.isTrailSurrogate(trail) else {
                index -= 6
                return fail("expected a low surrogate after a high surrogate")
            }
            return nil
        default:
            return fail("expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX) after '\\'")
        }
    }

    private mutating func hex4() -> UInt16? {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Self.hexValue(byte) else { return nil }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The length of the well-formed UTF-8 sequence at `i` (lead byte >= 0x80), or nil (Unicode table 3-7).
    static func utf8SequenceLength(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        func continuation(_ j: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            j < b.count && range.contains(b[j])
        }
        switch b[i] {
        case 0xC2...0xDF:
            return continuation(i + 1) ? 2 : nil
        case 0xE0:
            return continuation(i + 1, 0xA0...0xBF) && continuation(i + 2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(i + 1) && continuation(i + 2) ? 3 : nil
        case 0xED:
            return continuation(i + 1, 0x80...0x9F) && continuation(i + 2) ? 3 : nil
        case 0xF0:
            return continuation(i + 1, 0x90...0xBF) && continuation(i + 2) && continuation(i + 3) ? 4 : nil
        case 0xF1...0xF3:
            return continuation(i + 1) && continuation(i + 2) && continuation(i + 3) ? 4 : nil
        case 0xF4:
            return continuation(i + 1, 0x80...0x8F) && continuation(i + 2) && continuation(i + 3) ? 4 : nil
        default:
            return nil
        }
    }

    // MARK: Duplicate keys

    private func sameKey(_ a: KeySlot, _ b: KeySlot) -> Bool {
        if !a.escaped && !b.escaped {
            guard a.end - a.start == b.end - b.start else { return false }
            return memcmpEqual(a.start, b.start, a.end - a.start)
        }
        // Escapes make different spellings of one key ("a" and "\u0061"): compare the scalars they denote.
        var i = a.start
        var j = b.start
        while i < a.end, j < b.end {
            guard scalar(at: &i) == scalar(at: &j) else { return false }
        }
        return i == a.end && j == b.end
    }

    private func memcmpEqual(_ a: Int, _ b: Int, _ count: Int) -> Bool {
        for offset in 0..<count where bytes[a + offset] != bytes[b + offset] { return false }
        return true
    }

    /// The scalar value at `i` of an already validated key, escape or UTF-8; advances `i` past it.
    private func scalar(at i: inout Int) -> UInt32 {
        let byte = bytes[i]
        if byte == UInt8(ascii: "\\") {
            let kind = bytes[i + 1]
            i += 2
            switch kind {
            case UInt8(ascii: "b"): return 0x08
            case UInt8(ascii: "f"): return 0x0C
            case UInt8(ascii: "n"): return 0x0A
            case UInt8(ascii: "r"): return 0x0D
            case UInt8(ascii: "t"): return 0x09
            case UInt8(ascii: "u"):
                let unit = hex(at: &i)
                guard UTF16.isLeadSurrogate(UInt16(unit)) else { return unit }
                i += 2
                let trail = hex(at: &i)
                return 0x10000 + ((unit - 0xD800) << 10) + (trail - 0xDC00)
            default: return UInt32(kind)
            }
        }
        if byte < 0x80 {
            i += 1
            return UInt32(byte)
        }
        let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
        var value = UInt32(byte) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length { value = value << 6 | UInt32(bytes[i + k] & 0x3F) }
        i += length
        return value
    }

    private func hex(at i: inout Int) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            value = value << 4 | UInt32(Self.hexValue(bytes[i]) ?? 0)
            i += 1
        }
        return value
    }

    private func text(of key: KeySlot) -> String {
        let raw = String(decoding: UnsafeBufferPointer(rebasing: bytes[key.start..<key.end]), as: UTF8.self)
        return raw.truncatedForMessage
    }
}

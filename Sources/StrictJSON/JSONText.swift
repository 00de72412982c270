/// JSON scalars written as bytes.
///
/// The one spelling that ``OrderedJSONEncoder`` and ``ReplyEncoder`` share.
package enum JSONText {
    package static func appendLiteral(_ text: StaticString, to bytes: inout [UInt8]) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A quoted string; slashes are left alone, everything else escaped as JSON requires.
    package static func appendString(_ string: String, to bytes: inout [UInt8]) {
        // Most strings (keys, enum values, ids) need no escaping: one append instead of one per byte.
        let plain = string.utf8.withContiguousStorageIfAvailable { !$0.contains(where: needsEscaping) } ?? false
        bytes.append(UInt8(ascii: "\""))
        if plain {
            bytes.append(contentsOf: string.utf8)
        } else {
            for byte in string.utf8 { appendEscaped(byte, to: &bytes) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendEscaped(_ byte: UInt8, to bytes: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): appendLiteral(#"\""#, to: &bytes)
        case UInt8(ascii: "\\"): appendLiteral(#"\\"#, to: &bytes)
        case 0x0A: appendLiteral(#"\n"#, to: &bytes)
        case 0x0D: appendLiteral(#"\r"#, to: &bytes)
        case 0x09: appendLiteral(#"\t"#, to: &bytes)
        case 0x08: appendLiteral(#"\b"#, to: &bytes)
        case 0x0C: appendLiteral(#"\f"#, to: &bytes)
        case 0..<0x20:
            appendLiteral(#"\u00"#, to: &bytes)
            bytes.append(hexDigit(byte >> 4))
            bytes.append(hexDigit(byte & 0xF))
        default:
            bytes.append(byte)
        }
    }

    private static func needsEscaping(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    package static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(of: value.magnitude, to: &bytes)
    }

    package static func appendInteger(_ value: UInt64, to bytes: inout [UInt8]) {
        appendDigits(of: value, to: &bytes)
    }

    /// Any other integer type, through the 64-bit spellings above.
    ///
    /// A generic digit loop called from another module runs unspecialized, every division a protocol call: the
    /// digits are always written by the concrete one.
    package static func appendInteger(_ value: some FixedWidthInteger, to bytes: inout [UInt8]) {
        if let signed = Int64(exactly: value) {
            appendInteger(signed, to: &bytes)
        } else if let unsigned = UInt64(exactly: value) {
            appendInteger(unsigned, to: &bytes)
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
    }

    private static func appendDigits(of magnitude: UInt64, to bytes: inout [UInt8]) {
        // The digits counted first, then written from the last into room made in one append: no String, and
        // no capacity check per digit.
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var remaining = magnitude
            var index = start + digits - 1
            while remaining > 0 {
                buffer[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
                index -= 1
            }
        }
    }

    /// The shortest text that reads back as the same Double.
    ///
    /// Integral values without ".0", as `JSONEncoder` writes them. The caller rules out NaN and the infinities, which
    /// JSON lacks.
    package static func appendFiniteDouble(_ value: Double, to bytes: inout [UInt8]) {
        // A whole number below 10^15 (a duration in seconds, say) is its integer's digits, which is what its
        // description says once ".0" is dropped; -0 keeps its sign, so it takes the general path.
        if value.rounded(.towardZero) == value, value.magnitude < 1e15, !(value == 0 && value.sign == .minus) {
            appendInteger(Int64(value), to: &bytes)
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }
}

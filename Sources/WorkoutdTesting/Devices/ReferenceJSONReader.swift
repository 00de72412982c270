import StrictJSON

/// A deliberately plain JSON reader, written from RFC 8259's grammar for the fuzzer's oracle only.
///
/// It judges a line independently of the daemon's ``StrictJSONValidator`` so the two can be compared.
///
/// Nothing here is tuned: the line is first decoded as UTF-8 by the standard library (which refuses
/// overlong forms, encoded surrogates and code points past U+10FFFF), then read by recursive descent
/// over its scalars, one grammar rule per function. The protocol's additions to RFC 8259 are applied
/// the obvious way: an object's keys, as decoded scalars, go into a set (I-JSON, RFC 7493: no
/// duplicates); containers nest at most ``maximumDepth`` deep (so the recursion is bounded); a `\u`
/// escape that is a lone surrogate is refused (it denotes no character).
public enum ReferenceJSONReader {
    /// The protocol's documented nesting limit.
    public static let maximumDepth = 64

    public enum Verdict: Hashable, Sendable {
        /// Not one JSON text under the rules above.
        case invalid
        /// Valid JSON whose top-level value is not an object.
        case notAnObject
        /// A valid JSON object.
        case object
    }

    public static func verdict(of line: some Collection<UInt8>) -> Verdict {
        guard let text = String(validating: line, as: UTF8.self) else { return .invalid }
        var reader = Reader(scalars: Array(text.unicodeScalars))
        reader.skipWhitespace()
        let isObject = reader.peek == "{"
        guard reader.readValue(depth: 0), reader.atEndAfterWhitespace() else { return .invalid }
        return isObject ? .object : .notAnObject
    }
}

private struct Reader {
    let scalars: [Unicode.Scalar]
    var position = 0

    init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    var peek: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    mutating func take(_ scalar: Unicode.Scalar) -> Bool {
        guard peek == scalar else { return false }
        position += 1
        return true
    }

    // ws = *( %x20 / %x09 / %x0A / %x0D )
    mutating func skipWhitespace() {
        while let scalar = peek, scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
            position += 1
        }
    }

    mutating func atEndAfterWhitespace() -> Bool {
        skipWhitespace()
        return position == scalars.count
    }

    // value = false / null / true / object / array / number / string
    mutating func readValue(depth: Int) -> Bool {
        switch peek {
        case "{": return readObject(depth: depth + 1)
        case "[": return readArray(depth: depth + 1)
        case "\"": return readString() != nil
        case "t": return readWord("true")
        case "f": return readWord("false")
        case "n": return readWord("null")
        default: return readNumber()
        }
    }

    mutating func readWord(_ word: String) -> Bool {
        for scalar in word.unicodeScalars {
            guard take(scalar) else { return false }
        }
        return true
    }

    // object = begin-object [ member *( value-separator member ) ] end-object; member = string name-separator value
    mutating func readObject(depth: Int) -> Bool {
        guard depth <= ReferenceJSONReader.maximumDepth, take("{") else { return false }
        skipWhitespace()
        if take("}") { return true }
        var keys = Set<[UInt32]>()
        while true {
            skipWhitespace()
            guard let key = readString(), keys.insert(key).inserted else { return false }
            skipWhitespace()
            guard take(":") else { return false }
            skipWhitespace()
            guard readValue(depth: depth) else { return false }
            skipWhitespace()
            if take("}") { return true }
            guard take(",") else { return false }
        }
    }

    // array = begin-array [ value *( value-separator value ) ] end-array
    mutating func readArray(depth: Int) -> Bool {
        guard depth <= ReferenceJSONReader.maximumDepth, take("[") else { return false }
        skipWhitespace()
        if take("]") { return true }
        while true {
            skipWhitespace()
            guard readValue(depth: depth) else { return false }
            skipWhitespace()
            if take("]") { return true }
            guard take(",") else { return false }
        }
    }

    // number = [ minus ] int [ frac ] [ exp ]; int = zero / ( digit1-9 *DIGIT );
    // frac = decimal-point 1*DIGIT; exp = e [ minus / plus ] 1*DIGIT
    mutating func readNumber() -> Bool {
        _ = take("-")
        if take("0") {
            // Nothing to do: a digit after a leading zero is left over and fails whoever reads next.
        } else if readDigits() == 0 {
            return false
        }
        if take("."), readDigits() == 0 { return false }
        if take("e") || take("E") {
            if !take("+") { _ = take("-") }
            if readDigits() == 0 { return false }
        }
        return true
    }

    mutating func readDigits() -> Int {
        var count = 0
        while let scalar = peek, ("0"..."9").contains(scalar) {
            position += 1
            count += 1
        }
        return count
    }

    // string = quotation-mark *char quotation-mark; returns the scalars it denotes.
    mutating func readString() -> [UInt32]? {
        guard take("\"") else { return nil }
        var value: [UInt32] = []
        while let scalar = peek {
            position += 1
            switch scalar {
            case "\"":
                return value
            case "\\":
                guard let escaped = readEscape() else { return nil }
                value.append(escaped)
            default:
                // unescaped = %x20-21 / %x23-5B / %x5D-10FFFF
                guard scalar.value >= 0x20 else { return nil }
                value.append(scalar.value)
            }
        }
        return nil
    }

    mutating func readEscape() -> UInt32? {
        guard let kind = peek else { return nil }
        position += 1
        switch kind {
        case "\"": return 0x22
        case "\\": return 0x5C
        case "/": return 0x2F
        case "b": return 0x08
        case "f": return 0x0C
        case "n": return 0x0A
        case "r": return 0x0D
        case "t": return 0x09
        case "u":
            guard let first = readHex4() else { return nil }
            switch first {
            case 0xD800...0xDBFF:
                guard take("\\"), take("u"), let second = readHex4(), (0xDC00...0xDFFF).contains(second) else {
                    return nil
                }
                return 0x10000 + (first - 0xD800) * 0x400 + (second - 0xDC00)
            case 0xDC00...0xDFFF:
                return nil
            default:
                return first
            }
        default:
            return nil
        }
    }

    mutating func readHex4() -> UInt32? {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let scalar = peek, let digit = Int(String(scalar), radix: 16) else { return nil }
            position += 1
            value = value * 16 + UInt32(digit)
        }
        return value
    }
}

/// Text that came from a device (or was stored from one).
///
/// What the protocol refuses in it, and how every text output shows it.
///
/// Two rules, one place. What a wearable may put in a string field the hub stores or shows (`location`, a
/// string `id`) is checked by ``firstForbidden(in:)``: no control characters and nothing that reorders or
/// breaks the text on screen. Everything printed for people (workoutctl's tables and events, `workoutd
/// workouts`, the log) goes through ``escaped(_:quoting:)``, so rows an older version stored before the check
/// existed cannot drive a terminal or forge a log field either.
///
/// A "character" in the protocol's limits and positions is a Unicode scalar: grapheme clusters have no upper
/// bound on their size (one "character" can carry any number of combining marks).
public enum UntrustedText {
    /// Why a scalar is refused in a stored string field.
    public enum Forbidden: Sendable, Hashable, CustomStringConvertible {
        /// C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F).
        ///
        /// They drive terminals (ESC, CSI as U+009B, NEL) or move the cursor (CR, BS).
        case control
        /// The explicit bidirectional formatting characters.
        ///
        /// Embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069) and the marks LRM, RLM and ALM (U+200E,
        /// U+200F, U+061C). They reorder what is shown around them, so a row can read differently from what it stores
        /// (CVE-2021-42574).
        case bidirectional
        /// LINE SEPARATOR and PARAGRAPH SEPARATOR (U+2028, U+2029): a line break to many viewers.
        case lineBreak

        public var description: String {
            switch self {
            case .control: "control characters"
            case .bidirectional: "bidirectional formatting characters"
            case .lineBreak: "line or paragraph separators"
            }
        }
    }

    /// A refused scalar: what it is, which one, and where (1-based, counting Unicode scalars).
    public struct Finding: Sendable, Hashable {
        public var kind: Forbidden
        public var scalar: Unicode.Scalar
        public var position: Int

        /// `'location' must not contain control characters (U+001B at character 4)`.
        public func message(field: String) -> String {
            "'\(field)' must not contain \(kind.description) (\(UntrustedText.codePoint(scalar)) at character \(position))."
        }
    }

    /// Why `scalar` may not appear in a stored string field; nil when it may.
    public static func forbidden(_ scalar: Unicode.Scalar) -> Forbidden? {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: .control
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: .bidirectional
        case 0x2028, 0x2029: .lineBreak
        default: nil
        }
    }

    /// The first scalar of `text` that may not appear in a stored string field; nil when there is none.
    public static func firstForbidden(in text: String) -> Finding? {
        // Nearly every value is printable ASCII: one pass over the bytes, and the scalars only past that.
        let asciiClean = text.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 < 0x20 || $0 >= 0x7F }
        }
        if asciiClean == true { return nil }
        var position = 0
        for scalar in text.unicodeScalars {
            position += 1
            if let kind = forbidden(scalar) { return Finding(kind: kind, scalar: scalar, position: position) }
        }
        return nil
    }

    /// `U+001B`, as Unicode writes a code point.
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    // MARK: Showing text

    /// Whether `scalar` is shown as itself in text output. Not: every control (Cc), format character (Cf,
    /// bidi controls and invisible ones such as U+200B, U+FEFF and the tag characters) but ZWNJ and ZWJ, which
    /// scripts and emoji sequences need, line and paragraph separators, private-use, surrogate and unassigned
    /// code points (no terminal can be trusted to show those as one harmless glyph), and `\` (the escape
    /// character itself, so every escape is unambiguous).
    public static func isShownAsItself(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value >= 0x20 && scalar.value < 0x7F { return scalar != "\\" }
        if forbidden(scalar) != nil { return false }
        switch scalar.properties.generalCategory {
        case .format: return scalar.value == 0x200C || scalar.value == 0x200D
        case .control, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: return false
        default: return true
        }
    }

    /// `text` safe to print for people.
    ///
    /// `\` as `\\`, `\n` `\r` `\t`, other ASCII controls as `\x1b`, and every other scalar not shown as itself (see
    /// ``isShownAsItself(_:)``) as `\u{202e}`. With `quoting`, `"` is written `\"` as well, for values printed inside
    /// double quotes (logfmt).
    ///
    /// Every text output escapes through here, so one place decides what reaches a terminal or a log line.
    public static func escaped(_ text: String, quoting: Bool = false) -> String {
        let clean = text.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains {
                $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\\") || (quoting && $0 == UInt8(ascii: "\""))
            }
        }
        if clean == true { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if quoting && scalar == "\"" {
                result.append(contentsOf: #"\""#.unicodeScalars)
            } else if isShownAsItself(scalar) {
                result.append(scalar)
            } else {
                result.append(contentsOf: escape(scalar).unicodeScalars)
            }
        }
        return String(result)
    }

    /// `value` as a logfmt value.
    ///
    /// Bare when it is a non-empty run of printable characters with no whitespace, `=`, `"` or `\`; otherwise in double
    /// quotes. Escaped either way, so a value ends where it seems to: no value can end its line, close its quotes early
    /// or add a `key=value` of its own.
    public static func logfmtValue(_ value: String) -> String {
        let text = escaped(value, quoting: true)
        let bare =
            !text.isEmpty
            && !text.unicodeScalars.contains {
                $0 == "=" || $0 == "\"" || $0 == "\\" || $0.properties.isWhitespace
            }
        return bare ? text : "\"" + text + "\""
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\\": return #"\\"#
        case "\n": return #"\n"#
        case "\r": return #"\r"#
        case "\t": return #"\t"#
        default:
            let hex = String(scalar.value, radix: 16)
            return scalar.value < 0x80 ? #"\x"# + (hex.count < 2 ? "0" : "") + hex : #"\u{"# + hex + "}"
        }
    }

    /// JSON text for people (`--json` output).
    ///
    /// Every scalar that ``isShownAsItself(_:)`` refuses and the encoder left raw (DEL, C1, bidi and other format
    /// characters; the encoder already escapes U+0000–U+001F, `"` and `\`) written as a `\uXXXX` escape, so a terminal
    /// shows the escape and a JSON reader still reads the same value.
    ///
    /// `json` must be valid JSON: then every byte that is not ASCII is inside a string, where an escape means
    /// the same scalar.
    public static func escapedJSON(_ json: [UInt8]) -> [UInt8] {
        guard json.contains(where: { $0 >= 0x7F }) else { return json }
        var result: [UInt8] = []
        result.reserveCapacity(json.count + 16)
        for scalar in String(decoding: json, as: UTF8.self).unicodeScalars {
            if scalar.value < 0x7F || isShownAsItself(scalar) {
                result.append(contentsOf: UTF8.encode(scalar) ?? UTF8.EncodedScalar())
            } else {
                for unit in UTF16.encode(scalar) ?? UTF16.EncodedScalar() {
                    let hex = String(unit, radix: 16)
                    result.append(contentsOf: (#"\u"# + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                }
            }
        }
        return result
    }
}

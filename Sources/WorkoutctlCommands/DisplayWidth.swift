/// How many terminal columns text takes: what table columns are aligned by.
///
/// Per character (grapheme cluster): an emoji shown as one (Emoji_Presentation, or a text emoji followed by
/// VS16) takes 2; otherwise its scalars add up, East Asian Wide and Fullwidth ones 2, combining marks, format
/// characters (zero-width space, joiners) and controls 0, everything else 1. A terminal that draws differently
/// (an old wcwidth table) may still be off by a column for the newest emoji.
public enum DisplayWidth {
    /// The columns `text` takes.
    public static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The columns one character takes: 0, 1 or 2.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        if scalars.contains(where: { $0.properties.isEmojiPresentation })
            || (scalars.contains("\u{FE0F}") && scalars.first?.properties.isEmoji == true)
        {
            return 2
        }
        return min(2, scalars.reduce(0) { $0 + of($1) })
    }

    /// The columns one scalar takes on its own.
    static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        if value < 0x300 { return 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        // Hangul medial vowels and final consonants join the initial before them.
        if (0x1160...0x11FF).contains(value) || (0xD7B0...0xD7FF).contains(value) { return 0 }
        return wide.contains { $0.contains(value) } ? 2 : 1
    }

    /// The East Asian Width W and F ranges outside emoji, which are told by their presentation.
    static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul initial consonants
        0x2329...0x232A,
        0x2E80...0x303E,  // CJK radicals to CJK symbols and punctuation, ideographic space
        0x3041...0x33FF,  // kana, bopomofo, Hangul compatibility jamo, CJK compatibility
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small forms
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,
        0x16FE0...0x16FE4,
        0x17000...0x18CFF,  // Tangut, Khitan
        0x1B000...0x1B2FF,  // kana supplement and extensions, Nushu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK extensions B to F
        0x30000...0x3FFFD,  // CJK extensions G and H
    ]

    /// `text` cut to at most `width` columns, ending in `…` when anything was cut.
    public static func truncated(_ text: String, to width: Int) -> String {
        guard of(text) > width else { return text }
        guard width > 0 else { return "" }
        var kept = ""
        var used = 0
        for character in text {
            let columns = of(character)
            if used + columns > width - 1 { break }
            kept.append(character)
            used += columns
        }
        return kept + "…"
    }
}

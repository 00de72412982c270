extension String {
    /// Echoing a 4 KiB value back in an error message helps nobody. Counted in Unicode scalars, as the protocol
    /// counts characters: a grapheme cluster has no size bound, so 64 of them could still be the whole line.
    package var truncatedForMessage: String {
        unicodeScalars.count <= 64 ? self : String(String.UnicodeScalarView(unicodeScalars.prefix(61))) + "..."
    }
}

import WorkoutProtocol

/// Text for an HTML page: every string a device, file or user supplied goes through here.
enum HTMLText {
    /// `text` as HTML character data or a quoted attribute value.
    ///
    /// Control and bidi characters as the other outputs show them (`UntrustedText.escaped`), then `& < > " '` as
    /// entities, so no string can open a tag, end an attribute or reorder what is shown around it.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in UntrustedText.escaped(text) {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}

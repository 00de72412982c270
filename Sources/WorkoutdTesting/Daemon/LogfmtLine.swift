/// A daemon log line read as a logfmt reader reads it, to check that no value added a field of its own.
public enum LogfmtLine {
    /// The keys: each `key=` outside double quotes, where `\` escapes the next character.
    public static func keys(_ line: some StringProtocol) -> [String] {
        var keys: [String] = []
        var token = ""
        var inValue = false
        var quoted = false
        var escaped = false
        for character in line {
            if quoted {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                }
            } else if character == "\"" {
                quoted = true
            } else if character == " " {
                token = ""
                inValue = false
            } else if character == "=" && !inValue {
                keys.append(token)
                inValue = true
            } else if !inValue {
                token.append(character)
            }
        }
        return keys
    }
}

/// One sample line of the Prometheus text format: `name{label="value",…} 12`.
struct PrometheusSample: Encodable, Hashable {
    var name: String
    var labels: [String: String]
    var value: Double

    /// The samples of an exposition; comments and lines that are not samples are skipped.
    static func parse(_ text: String) -> [PrometheusSample] {
        text.split(separator: "\n").compactMap { parse(line: Substring($0)) }
    }

    static func parse(line: Substring) -> PrometheusSample? {
        guard !line.hasPrefix("#"), let nameEnd = line.firstIndex(where: { $0 == "{" || $0 == " " }) else { return nil }
        let name = String(line[..<nameEnd])
        var labels: [String: String] = [:]
        var rest = line[nameEnd...]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while let equals = rest.firstIndex(of: "=") {
                let key = String(rest[..<equals]).trimmingPrefix(",")
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
                var value = ""
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(character == "n" ? "\n" : character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
                labels[String(key)] = value
                if rest.first == "}" { break }
            }
            guard rest.first == "}" else { return nil }
            rest = rest.dropFirst()
        }
        let fields = rest.split(separator: " ")
        guard let valueText = fields.first, let value = Double(valueText) ?? Self.special(valueText) else { return nil }
        return PrometheusSample(name: name, labels: labels, value: value)
    }

    private static func special(_ text: Substring) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: nil
        }
    }
}

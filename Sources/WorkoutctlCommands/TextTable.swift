import WorkoutProtocol

/// A plain-text table with a header row and columns padded to their widest cell, for terminal output.
///
/// Every cell is escaped (``UntrustedText/escaped(_:quoting:)``): whatever was stored, a row is one line of
/// printable text. Widths count `Character`s, so a location such as "Gary's Gym" or "Zürich" lines up in a UTF-8 terminal.
public struct TextTable: Sendable {
    /// How a column's cells line up within its width.
    public enum Alignment: Sendable {
        case left
        case right
    }

    /// A column: its header and how its cells are aligned (numbers read best aligned right).
    public struct Column: Sendable {
        public var header: String
        public var alignment: Alignment

        public init(_ header: String, alignment: Alignment = .left) {
            self.header = header
            self.alignment = alignment
        }
    }

    public let columns: [Column]
    public private(set) var rows: [[String]] = []
    /// Placed between columns.
    public var separator = "  "

    public init(columns: [Column]) {
        self.columns = columns
    }

    /// Adds a row; missing cells are blank and extra cells are dropped.
    ///
    /// So a short row never misaligns the rest.
    public mutating func append(_ cells: [String]) {
        var row = Array(cells.prefix(columns.count))
        while row.count < columns.count { row.append("") }
        // Cells carry device input, also as older versions stored it: escaped, so a newline cannot break the
        // table's one-line-per-row shape, nor ESC, CR or a bidi override change what the terminal shows.
        rows.append(row.map { UntrustedText.escaped($0) })
    }

    /// The header, then one line per row, each ending in a newline; trailing spaces trimmed.
    public func render() -> String {
        let widths = columns.indices.map { index in
            rows.reduce(columns[index].header.count) { max($0, $1[index].count) }
        }
        var output = ""
        for row in [columns.map(\.header)] + rows {
            var line = ""
            for (index, cell) in row.enumerated() {
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                if index > 0 { line += separator }
                switch columns[index].alignment {
                case .left: line += cell + padding
                case .right: line += padding + cell
                }
            }
            while line.last == " " { line.removeLast() }
            output += line + "\n"
        }
        return output
    }
}

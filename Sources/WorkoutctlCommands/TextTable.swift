import WorkoutProtocol

/// A plain-text table with a header row and columns padded to their widest cell, for terminal output.
///
/// Every cell is escaped (``UntrustedText/escaped(_:quoting:)``): whatever was stored, a row is one line of
/// printable text. Widths are display widths (``DisplayWidth``), so "Zürich", "東京" and "🏃" line up in a UTF-8
/// terminal.
public struct TextTable: Sendable {
    /// How a column's cells line up within its width.
    public enum Alignment: Sendable {
        case left
        case right
    }

    /// A column: its header and how its cells are aligned (numbers read best aligned right).
    ///
    /// A column that is not `truncatable` (a time, which means nothing cut short) keeps its width when the table is
    /// fitted to a terminal; right-aligned columns (numbers) always do.
    public struct Column: Sendable {
        public var header: String
        public var alignment: Alignment
        public var truncatable: Bool

        public init(_ header: String, alignment: Alignment = .left, truncatable: Bool = true) {
            self.header = header
            self.alignment = alignment
            self.truncatable = truncatable
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
    ///
    /// With `width`, left-aligned truncatable columns give up columns, the widest first, until a line fits; a cell
    /// cut short ends in `…`. A column keeps at least its header's width, so a table too wide for that stays wider
    /// than `width`.
    public func render(width: Int? = nil) -> String {
        var widths = columns.indices.map { index in
            rows.reduce(DisplayWidth.of(columns[index].header)) { max($0, DisplayWidth.of($1[index])) }
        }
        if let width { shrink(&widths, to: width) }
        var output = ""
        for (number, row) in ([columns.map(\.header)] + rows).enumerated() {
            var line = ""
            for (index, cell) in row.enumerated() {
                let shown = number == 0 ? cell : DisplayWidth.truncated(cell, to: widths[index])
                let padding = String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(shown)))
                if index > 0 { line += separator }
                switch columns[index].alignment {
                case .left: line += shown + padding
                case .right: line += padding + shown
                }
            }
            while line.last == " " { line.removeLast() }
            output += line + "\n"
        }
        return output
    }

    /// Narrows the left-aligned columns, the widest first, until the line fits `width`.
    ///
    /// Or until none can give more.
    private func shrink(_ widths: inout [Int], to width: Int) {
        let minimum = columns.map { max(DisplayWidth.of($0.header), 3) }
        var excess = widths.reduce(0, +) + DisplayWidth.of(separator) * max(0, columns.count - 1) - width
        while excess > 0 {
            let candidates = columns.indices.filter {
                columns[$0].alignment == .left && columns[$0].truncatable && widths[$0] > minimum[$0]
            }
            guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { return }
            widths[widest] -= 1
            excess -= 1
        }
    }
}

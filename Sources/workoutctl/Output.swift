import CommandLineOutput
import ControlProtocol
import Foundation
import RecordTables

/// How workoutctl prints: JSON lines for scripts, tables and short human forms for people.
enum Output {
    private static let encoder = ControlSocket.makeEncoder()

    /// `value` as one compact JSON line on stdout.
    static func json(_ value: some Encodable) {
        guard let line = try? ControlSocket.line(value, encoder: encoder) else { return }
        FileHandle.standardOutput.write(Data(line))
    }

    static func table(_ table: TextTable) {
        FileHandle.standardOutput.write(Data(table.render().utf8))
    }

    static func text(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// As the record tables print times; `-` when absent.
    static func date(_ date: Date?) -> String {
        date.map(TableDate.format) ?? "-"
    }

    /// `45.2s`, `12m05s`, `3h02m`, `2d04h`: precise when short, coarse when long.
    static func duration(_ seconds: Double?) -> String {
        guard let seconds else { return "-" }
        if seconds < 60 { return String(format: "%.1fs", seconds) }
        let whole = Int(seconds)
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        if whole < 86400 { return String(format: "%dh%02dm", whole / 3600, whole % 3600 / 60) }
        return String(format: "%dd%02dh", whole / 86400, whole % 86400 / 3600)
    }
}

import ControlProtocol
import Foundation
import WorkoutProtocol

/// How workoutctl prints: JSON lines for scripts, tables and short human forms for people.
enum Output {
    private static let encoder = ControlSocket.makeEncoder()

    /// `value` as one compact JSON line on stdout, terminal controls escaped.
    ///
    /// What a terminal would act on (C1, bidi) is written as `\u` escapes.
    static func json(_ value: some Encodable) {
        guard let line = try? ControlSocket.line(value, encoder: encoder) else { return }
        FileHandle.standardOutput.write(Data(UntrustedText.escapedJSON(line)))
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

    /// `0.006s`: the same value and rounding as the reply, the tables and `workoutd workouts`.
    static func duration(_ seconds: Double?) -> String {
        seconds.map { WorkoutDuration.text($0) + "s" } ?? "-"
    }
}

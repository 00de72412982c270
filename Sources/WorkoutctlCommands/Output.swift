import CPosixTTY
import ControlProtocol
import Foundation
import WorkoutProtocol

/// How workoutctl prints: JSON lines for scripts, tables and short human forms for people.
public enum Output {
    private static let encoder = ControlSocket.makeEncoder()

    /// `value` as one compact JSON line on stdout, terminal controls escaped.
    ///
    /// What a terminal would act on (C1, bidi) is written as `\u` escapes.
    static func json(_ value: some Encodable) {
        guard let line = try? ControlSocket.line(value, encoder: encoder) else { return }
        FileHandle.standardOutput.write(Data(UntrustedText.escapedJSON(line)))
    }

    /// `table`, cut to the terminal's width when stdout is one; whole into a pipe or a file.
    public static func table(_ table: TextTable) {
        FileHandle.standardOutput.write(Data(table.render(width: terminalWidth()).utf8))
    }

    /// The columns of the terminal on stdout; nil when stdout is no terminal.
    ///
    /// Its size (TIOCGWINSZ), else `COLUMNS`.
    ///
    /// Output to a pipe or a file is for reading whole (`grep`, `less -S`), so it is never cut.
    public static func terminalWidth(
        descriptor: Int32 = STDOUT_FILENO,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Int? {
        guard isatty(descriptor) == 1 else { return nil }
        let columns = wd_terminal_columns(descriptor)
        if columns > 0 { return Int(columns) }
        return environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
    }

    static func text(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// As the record tables print times; `-` when absent.
    static func date(_ date: Date?) -> String {
        date.map(TableDate.format) ?? "-"
    }

    /// As the tables print durations (``SpokenDuration``); `-` when absent.
    static func duration(_ seconds: Double?) -> String {
        seconds.map(SpokenDuration.text) ?? "-"
    }
}

import Testing

import struct WorkoutctlCommands.TextTable

@Suite struct TextTableTests {
    @Test func columnsAreAlignedUnderTheirHeaders() {
        var table = TextTable(columns: [.init("ID", alignment: .right), .init("LOCATION"), .init("STATUS")])
        table.append(["7", "Gary's Gym", "ok"])
        table.append(["1024", "Zürich", "pending"])
        #expect(
            table.render() == """
                  ID  LOCATION    STATUS
                   7  Gary's Gym  ok
                1024  Zürich      pending

                """
        )
    }

    @Test func shortRowsAreBlankFilledAndNewlinesEscaped() {
        var table = TextTable(columns: [.init("A"), .init("B"), .init("C")])
        table.append(["x\ny"])
        #expect(table.render() == "A     B  C\nx\\ny\n")
    }

    /// A cell as an older version may have stored it.
    ///
    /// Every byte a terminal would act on comes out as an escape, and the row stays one line whose columns still line
    /// up.
    @Test func hostileCellsAreEscapedAndStayInTheirColumn() {
        var table = TextTable(columns: [.init("LOCATION"), .init("ID")])
        table.append(["Gym\u{1B}[31mRED\u{1B}[0m\rFAKE ROW", "1"])
        table.append(["a\u{85}b\u{202E}c\u{2066}d\u{7F}e\\f\u{200B}g\u{2028}h", "2"])
        table.append(["Zürich 🏃‍♀️", "3"])
        #expect(
            table.render() == #"""
                LOCATION                                              ID
                Gym\x1b[31mRED\x1b[0m\rFAKE ROW                       1
                a\u{85}b\u{202e}c\u{2066}d\x7fe\\f\u{200b}g\u{2028}h  2
                Zürich 🏃‍♀️                                              3

                """#
        )
    }
}

import struct WorkoutctlCommands.TextTable
import Testing

@Suite struct TextTableTests {
    @Test func columnsAreAlignedUnderTheirHeaders() {
        var table = TextTable(columns: [.init("ID", alignment: .right), .init("LOCATION"), .init("STATUS")])
        table.append(["7", "Gary's Gym", "ok"])
        table.append(["1024", "Zürich", "pending"])
        #expect(table.render() == """
              ID  LOCATION    STATUS
               7  Gary's Gym  ok
            1024  Zürich      pending

            """)
    }

    @Test func shortRowsAreBlankFilledAndNewlinesFlattened() {
        var table = TextTable(columns: [.init("A"), .init("B"), .init("C")])
        table.append(["x\ny"])
        #expect(table.render() == "A    B  C\nx y\n")
    }
}

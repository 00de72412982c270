import ControlProtocol
import Foundation
import Testing
import WorkoutctlCommands

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
                Zürich 🏃‍♀️                                             3

                """#
        )
    }
}

/// Columns line up by what a terminal draws, and a table fits the terminal it is shown on.
@Suite struct TableWidthTests {
    @Test func wideAndCombiningAndEmojiCellsLineUp() {
        var table = TextTable(columns: [.init("LOCATION"), .init("ID", alignment: .right)])
        table.append(["東京ジム", "1"])
        table.append(["Cafe\u{301} 🏋️", "2"])
        table.append(["🇯🇵 Gym", "3"])
        table.append(["Plain", "4"])
        #expect(
            table.render() == """
                LOCATION  ID
                東京ジム   1
                Café 🏋️    2
                🇯🇵 Gym     3
                Plain      4

                """
        )
    }

    @Test func longCellsAreCutWithAnEllipsisToTheWidth() {
        var table = TextTable(columns: [.init("ID", alignment: .right), .init("LOCATION"), .init("STATE")])
        table.append(["1", String(repeating: "Very long location ", count: 10), "ok"])
        table.append(["2", "東京" + String(repeating: "ジム", count: 20), "ok"])
        let lines = table.render(width: 40).split(separator: "\n")
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 40 }, "\(lines)")
        #expect(lines[1] == " 1  Very long location Very long…  ok")
        #expect(lines[2] == " 2  東京ジムジムジムジムジムジム…  ok")
        #expect(table.render().contains(String(repeating: "Very long location ", count: 9)), "no width: whole")
    }

    @Test func timesKeepTheirWidthWhileTextGivesWay() {
        var table = TextTable(columns: [.init("LOCATION"), .init("STARTED", truncatable: false), .init("FLAGS")])
        table.append(["A gym with a very long name indeed", "2026-11-28 07:50:15Z", "clock-unsynchronized"])
        let lines = table.render(width: 50).split(separator: "\n")
        #expect(lines[1] == "A gym with a…  2026-11-28 07:50:15Z  clock-unsync…", "\(lines)")
    }

    @Test func headersAreNeverCut() {
        var table = TextTable(columns: [.init("LOCATION"), .init("DEVICE")])
        table.append(["somewhere far away", "a-wearable-with-a-long-name"])
        let lines = table.render(width: 10).split(separator: "\n")
        #expect(lines[0] == "LOCATION  DEVICE")
        #expect(lines[1] == "somewhe…  a-wea…")
    }
}

@Suite struct DisplayWidthTests {
    @Test func countsWhatATerminalDraws() {
        #expect(DisplayWidth.of("Gym") == 3)
        #expect(DisplayWidth.of("Zürich") == 6)
        #expect(DisplayWidth.of("Zu\u{308}rich") == 6, "a combining diaeresis takes no column")
        #expect(DisplayWidth.of("東京") == 4)
        #expect(DisplayWidth.of("ｔｏｋｙｏ") == 10, "fullwidth Latin")
        #expect(DisplayWidth.of("한국") == 4)
        #expect(DisplayWidth.of("\u{1100}\u{1161}\u{11A8}") == 2, "conjoining jamo make one syllable")
        #expect(DisplayWidth.of("🏃") == 2)
        #expect(DisplayWidth.of("🏃‍♀️") == 2, "a ZWJ sequence is one picture")
        #expect(DisplayWidth.of("❤️") == 2, "a text emoji with VS16")
        #expect(DisplayWidth.of("❤") == 1, "the same without: text presentation")
        #expect(DisplayWidth.of("🇯🇵") == 2)
        #expect(DisplayWidth.of("a\u{200B}b") == 2, "zero-width space")
        #expect(DisplayWidth.of("½ ©") == 3)
    }

    @Test func cutsNeverSplitACharacterOrOverflow() {
        #expect(DisplayWidth.truncated("東京ジム", to: 4) == "東…")
        #expect(DisplayWidth.truncated("東京ジム", to: 8) == "東京ジム")
        #expect(DisplayWidth.truncated("Cafe\u{301}s", to: 4) == "Caf…")
        #expect(DisplayWidth.truncated("Café", to: 4) == "Café")
        #expect(DisplayWidth.truncated("🏃‍♀️🏃‍♀️", to: 3) == "🏃‍♀️…")
        #expect(DisplayWidth.truncated("abc", to: 0) == "")
    }
}

@Suite struct SpokenDurationTests {
    @Test func readsAsPeopleSayIt() {
        #expect(SpokenDuration.text(0.006) == "6 ms")
        #expect(SpokenDuration.text(0) == "0 ms")
        #expect(SpokenDuration.text(11.979) == "11 s")
        #expect(SpokenDuration.text(12) == "12 s")
        #expect(SpokenDuration.text(59.9) == "59 s", "never rounded up to a minute")
        #expect(SpokenDuration.text(185) == "3 min 05 s")
        #expect(SpokenDuration.text(3720) == "1 h 02 min")
        #expect(SpokenDuration.text(36_000) == "10 h 00 min")
        #expect(SpokenDuration.text(183_600) == "2 d 03 h")
        #expect(SpokenDuration.text(-1) == "-")
    }
}

@Suite struct QueryTimeTests {
    @Test func takesTheAPIsFormsAndTheTablesOwn() {
        let expected = Date(timeIntervalSince1970: 1_795_852_215)
        #expect(QueryTime.parse("2026-11-28T07:50:15Z") == expected)
        #expect(QueryTime.parse("2026-11-28 07:50:15Z") == expected, "as the tables print it")
        #expect(QueryTime.parse("2026-11-28T08:50:15+01:00") == expected)
        #expect(QueryTime.parse("2026-11-28T07:50:15.000Z") == expected)
        #expect(QueryTime.parse("2026-11-28") == nil, "a time needs its zone")
        #expect(QueryTime.parse("yesterday") == nil)
        #expect(TableDate.format(expected) == "2026-11-28 07:50:15Z")
    }
}

/// What `workoutctl diagnose` does to a configuration before it leaves the hub.
@Suite struct RedactionTests {
    @Test func secretsAreMarkedAndWhatIsNotSecretStays() {
        var redaction = Redaction()
        let yaml = redaction.configuration(
            """
            state_dir: /var/lib/workoutd  # the old password was hunter22
            replication:
              postgres_url: postgres://hub:S3cretPass@db.example.org/workouts?sslmode=require
              password_file: /etc/workoutd/pg-password
              allow_password_without_verified_server: false
            clock:
              assume_synchronized: false
            shares:
              twitter:
                url: "https://user:HookPass@hooks.example.com/services/SECRETPATH?key=K3yValue"
                command: [/usr/bin/notify, --token, T0kenValue]
            web:
              token: WebT0ken
              token_file: ""
            """
        )
        #expect(
            yaml == """
                state_dir: /var/lib/workoutd
                replication:
                  postgres_url: "postgres://hub:**REDACTED**@db.example.org/workouts?sslmode=require"
                  password_file: /etc/workoutd/pg-password
                  allow_password_without_verified_server: false
                clock:
                  assume_synchronized: false
                shares:
                  twitter:
                    url: "https://user:**REDACTED**@hooks.example.com/**REDACTED**"
                    command: [/usr/bin/notify, "**REDACTED**"]
                web:
                  token: "**REDACTED**"
                  token_file: ""
                """
        )
        let unit = """
            Environment=WORKOUTD_REPLICATION_POSTGRES_URL=postgres://hub:S3cretPass@db/workouts
            ExecStart=/usr/bin/notify --token T0kenValue
            line with password=Other1 and Authorization: Bearer abc.def and access_token=xyz
            """
        let scrubbed = redaction.scrub(unit)
        for secret in ["S3cretPass", "T0kenValue", "Other1", "abc.def", "xyz", "HookPass", "SECRETPATH", "WebT0ken"] {
            #expect(!scrubbed.contains(secret), "\(secret): \(scrubbed)")
        }
        #expect(scrubbed.contains("ExecStart=/usr/bin/notify --token **REDACTED**"), "\(scrubbed)")
        #expect(redaction.scrub("assume_synchronized: false") == "assume_synchronized: false")
    }
}

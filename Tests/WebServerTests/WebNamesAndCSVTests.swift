import ControlProtocol
import Foundation
import Testing
import WebAPI
import WorkoutProtocol
import WorkoutdTesting

/// Wearable names, the device filter, CSV export and the active filter, against a real daemon.
///
/// A name (`workoutctl label`) shows everywhere its wearable does; the filter matches part of a name, serial or node;
/// the CSV is the same from the API and from workoutctl, and neutralised against formulas.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebNamesAndCSVTests {
    @Test func aNameIsShownWhereverItsWearableIs() async throws {
        let first = try SimulatedWearable()
        let second = try SimulatedWearable()
        let web = try WebDaemon(devices: [first.devicePath, second.devicePath])
        #expect(try first.request(CommandLines.start(id: 1, location: "Pool")).contains(#""status":"ok""#))
        #expect(try first.request(CommandLines.end(id: 2)).contains(#""status":"ok""#))
        #expect(try first.request(CommandLines.share(id: 3)).contains(#""status":"ok""#))
        #expect(try second.request(CommandLines.start(id: 1, location: "Hall")).contains(#""status":"ok""#))

        let labelled = try Workoutctl.run(["--socket", web.socket, "label", first.devicePath, "Treadmill 3"])
        #expect(labelled.status == 0, "\(labelled.stderr)")
        #expect(labelled.stdout.contains("Treadmill 3"))

        let client = try web.client()
        let devices = try await client.getDevices().ok.body.json.devices
        #expect(devices.first { $0.node == first.devicePath }?.name == "Treadmill 3")
        #expect(devices.first { $0.node == second.devicePath }?.name == nil)
        let workouts = try await client.getWorkouts().ok.body.json.workouts
        #expect(workouts.filter { $0.location == "Pool" }.allSatisfy { $0.deviceName == "Treadmill 3" })
        #expect(workouts.filter { $0.location == "Hall" }.allSatisfy { $0.deviceName == nil })
        #expect(try await client.getShares().ok.body.json.shares.first?.deviceName == "Treadmill 3")

        let table = try Workoutctl.run(["--socket", web.socket, "devices"]).stdout
        #expect(table.contains("Treadmill 3 (\(first.devicePath))"), "\(table)")
        #expect(try Workoutctl.run(["--socket", web.socket, "workouts"]).stdout.contains("Treadmill 3 ("))
        #expect(try Workoutctl.run(["--socket", web.socket, "shares"]).stdout.contains("Treadmill 3 ("))
        let page = try await RawHTTP.send(.GET, web.baseURL + "/")
        #expect(page.body.contains("<strong>Treadmill 3</strong>"))

        // The filter takes a part of a name (any case), a serial or a node.
        let byName = try await client.getWorkouts(query: .init(device: "treadMILL")).ok.body.json.workouts
        #expect(byName.map(\.location) == ["Pool"])
        // A node picks every device whose node contains it (/dev/pts/1 picks /dev/pts/12 too): the filter names
        // the wearable whose node is not part of the other's.
        let (node, location) =
            first.devicePath.contains(second.devicePath) ? (first.devicePath, "Pool") : (second.devicePath, "Hall")
        let byNode = try await client.getWorkouts(query: .init(device: node)).ok.body.json.workouts
        #expect(byNode.map(\.location) == [location])
        #expect(try await client.getWorkouts(query: .init(device: "no such wearable")).ok.body.json.workouts.isEmpty)

        // Only what is running now.
        let active = try await client.getWorkouts(query: .init(active: true)).ok.body.json.workouts
        #expect(active.map(\.location) == ["Hall"])

        // Removed, it is gone everywhere.
        #expect(try Workoutctl.run(["--socket", web.socket, "label", first.devicePath, "--remove"]).status == 0)
        #expect(try await client.getDevices().ok.body.json.devices.allSatisfy { $0.name == nil })
    }

    @Test func aNameIsCheckedBeforeItIsKept() throws {
        let wearable = try SimulatedWearable()
        let web = try WebDaemon(devices: [wearable.devicePath])
        for name in [String(repeating: "x", count: 65), "Bad\u{1B}[31mname", "   "] {
            let result = try Workoutctl.run(["--socket", web.socket, "label", wearable.devicePath, name])
            #expect(result.status != 0, "\(name)")
        }
        // Past workoutctl's own check, the daemon refuses it as well.
        let line = #"{"id":1,"method":"label","params":{"device":"x","name":"a\u202Eb"}}"#
        let reply = try ControlSocketLine.exchange(socket: web.socket, line)
        #expect(reply.contains(#""code":"invalid_params""#), "\(reply)")
        #expect(try web.ctlJSON(["devices"], as: DeviceReport.self).allSatisfy { $0.name == nil })
    }

    @Test func theCSVIsTheSameFromTheAPIAndWorkoutctlAndRunsNoFormula() async throws {
        let wearable = try SimulatedWearable()
        let web = try WebDaemon(devices: [wearable.devicePath])
        let locations = ["Main hall", "=HYPERLINK(\"http://evil.example\",\"x\")", "-2+3", "@SUM(A1)", "Studio, \"B\""]
        for (n, location) in locations.enumerated() {
            #expect(try wearable.request(CommandLines.start(id: .init(2 * n), location: location)).contains(#""ok""#))
            #expect(try wearable.request(CommandLines.end(id: .init(2 * n + 1))).contains(#""ok""#))
        }
        #expect(try Workoutctl.run(["--socket", web.socket, "label", wearable.devicePath, "+Rower"]).status == 0)

        let reply = try await RawHTTP.send(.GET, web.baseURL + "/api/workouts.csv")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("text/csv") == true)
        #expect(reply.header("Content-Disposition")?.contains("workouts.csv") == true)
        let fromCtl = try Workoutctl.run(["--socket", web.socket, "workouts", "--csv"])
        #expect(fromCtl.status == 0)
        #expect(reply.body == fromCtl.stdout)

        let lines = reply.body.components(separatedBy: "\r\n")
        #expect(lines.first == WorkoutCSV.header.joined(separator: ","))
        #expect(lines.count == locations.count + 2 && lines.last == "")
        #expect(!reply.body.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        // Newest first; every formula-looking cell starts with a quote, so no cell starts with = + - or @.
        let cells = lines.dropFirst().dropLast().map(Self.fields)
        #expect(
            cells.map { $0[3] } == [
                #"Studio, "B""#, "'@SUM(A1)", "'-2+3", #"'=HYPERLINK("http://evil.example","x")"#, "Main hall",
            ]
        )
        #expect(cells.allSatisfy { $0[2] == "'+Rower" && $0[1] == wearable.devicePath })
        for row in cells { #expect(row.allSatisfy { !"=+-@".contains($0.first ?? " ") }, "\(row)") }

        // The same filters as /api/workouts.
        let filtered = try await RawHTTP.send(.GET, web.baseURL + "/api/workouts.csv?device=rower&limit=2")
        #expect(filtered.body.components(separatedBy: "\r\n").count == 4)
        let none = try await RawHTTP.send(.GET, web.baseURL + "/api/workouts.csv?device=nobody")
        #expect(none.body == WorkoutCSV.header.joined(separator: ",") + "\r\n")
    }

    /// The fields of one CSV line (RFC 4180 quoting).
    static func fields(_ line: String) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var characters = line.makeIterator()
        var pending: Character?
        while let character = pending ?? characters.next() {
            pending = nil
            if quoted {
                if character == "\"" {
                    if let following = characters.next() {
                        if following == "\"" {
                            field.append("\"")
                        } else {
                            quoted = false
                            pending = following
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }
}

/// One raw request line on the control socket, and its reply line.
///
/// For what workoutctl checks before it sends.
enum ControlSocketLine {
    static func exchange(socket path: String, _ line: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/socat")
        process.arguments = ["-t", "5", "-", "UNIX-CONNECT:\(path)"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
        let reply = output.fileHandleForReading.availableLine()
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        return reply
    }
}

extension FileHandle {
    /// Reads up to the first newline (or the end).
    fileprivate func availableLine() -> String {
        var bytes: [UInt8] = []
        while let chunk = try? read(upToCount: 1), let byte = chunk.first {
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

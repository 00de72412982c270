import ControlProtocol
import Foundation
import WorkoutProtocol

/// What `workoutctl diagnose` collects, redacted, and the archive it writes.
struct SupportBundle {
    var socket: String
    var configurationFile: String
    var stateDirectory: String?
    var journalLines: Int

    /// A file of the archive: its name and its text, before scrubbing.
    typealias Entry = (name: String, text: String)

    /// The UTC time in a file name: `20261128-075015Z`.
    static func stamp(_ date: Date) -> String {
        let format = Date.VerbatimFormatStyle(
            format:
                "\(year: .defaultDigits)\(month: .twoDigits)\(day: .twoDigits)-\(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased))\(minute: .twoDigits)\(second: .twoDigits)Z",
            timeZone: .gmt,
            calendar: Calendar(identifier: .gregorian)
        )
        return date.formatted(format)
    }

    /// Collects, redacts and writes the archive at `archive`, its files under `folder/`.
    func write(archive: String, folder: String) throws {
        var redaction = Redaction()
        var entries: [Entry] = []
        let configuration = configurationEntry(&redaction)
        let state = stateDirectory ?? Self.stateDirectory(in: configuration.raw) ?? "/var/lib/workoutd"
        entries.append(configuration.entry)
        let daemon = daemonEntries()
        entries.append(systemEntry(version: daemon.version))
        entries += daemon.entries
        entries.append(
            (
                "journal.txt",
                Self.run("journalctl", ["-u", "workoutd", "-n", "\(journalLines)", "--no-pager", "-o", "short-iso"])
            )
        )
        entries.append(("integrity.txt", integrity(stateDirectory: state)))
        entries.append(("unit.txt", Self.run("systemctl", ["cat", "--no-pager", "workoutd"])))
        entries.append(("udev.txt", udev(nodes: daemon.nodes)))
        entries.insert(("README.txt", Self.readme(entries.map(\.name))), at: 0)

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("diagnose-\(UUID().uuidString)")
        let directory = scratch.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for entry in entries {
            let text = redaction.scrub(entry.text)
            try Data((text.hasSuffix("\n") ? text : text + "\n").utf8)
                .write(to: directory.appendingPathComponent(entry.name))
        }
        let tar = Self.run("tar", ["-czf", archive, "-C", scratch.path, folder], keepStatus: true)
        guard tar.hasPrefix("exit 0\n") else {
            throw ControlConnectionError.failed("could not write \(archive): \(tar)")
        }
    }

    /// The configuration, redacted.
    ///
    /// The token and password files it names are read only to scrub their contents.
    private func configurationEntry(_ redaction: inout Redaction) -> (entry: Entry, raw: String) {
        guard let raw = try? String(contentsOfFile: configurationFile, encoding: .utf8) else {
            return (
                (
                    "config.yaml",
                    "# \(configurationFile): none (the daemon runs on its defaults and WORKOUTD_* variables)"
                ), ""
            )
        }
        let redacted = redaction.configuration(raw)
        for key in ["token_file", "password_file"] {
            for path in Self.values(of: key, in: raw) {
                if let secret = try? String(contentsOfFile: path, encoding: .utf8) { redaction.remember(secret) }
            }
        }
        return (("config.yaml", "# \(configurationFile), secrets replaced by \(Redaction.marker)\n" + redacted), raw)
    }

    /// Version and architecture: this tool's host, the installed package, and the daemon's own version.
    private func systemEntry(version: String?) -> Entry {
        var utsname = utsname()
        uname(&utsname)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { String($0.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        let lines = [
            "daemon version: \(version ?? "unknown (the daemon did not answer)")",
            "package: \(Self.run("dpkg-query", ["-W", "-f", "${Package} ${Version} ${Architecture}", "workoutd"]))",
            "architecture: \(field(utsname.machine))",
            "kernel: \(field(utsname.sysname)) \(field(utsname.release)) \(field(utsname.version))",
            "system: \(release ?? "unknown")",
            "collected: \(TableDate.format(Date()))",
        ]
        return ("system.txt", lines.joined(separator: "\n"))
    }

    /// status, devices and replication from the daemon, or why it did not answer.
    private func daemonEntries() -> (entries: [Entry], version: String?, nodes: [String]) {
        let encoder = ControlSocket.makeEncoder()
        encoder.outputFormatting.insert(.prettyPrinted)
        func json(_ value: some Encodable) -> String {
            (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "could not be encoded"
        }
        let connection: ControlConnection
        do {
            connection = try ControlConnection(path: socket)
        } catch {
            let reason = "workoutctl: \(error)"
            return ([("status.txt", reason), ("devices.txt", reason)], nil, [])
        }
        defer { connection.close() }
        var entries: [Entry] = []
        var version: String?
        do {
            let status = try connection.call(.status, as: StatusReport.self)
            version = status.version
            entries.append(("status.json", json(status)))
            entries.append(
                ("replication.json", status.replication.map(json) ?? "replication is off (no replication section)")
            )
        } catch {
            entries.append(("status.txt", "workoutctl: \(error)"))
        }
        var nodes: [String] = []
        do {
            let devices = try connection.call(.devices, as: DeviceList.self)
            nodes = devices.devices.map(\.node)
            entries.append(("devices.json", json(devices)))
        } catch {
            entries.append(("devices.txt", "workoutctl: \(error)"))
        }
        return (entries, version, nodes)
    }

    /// The read-only integrity check of `workoutd check-db`.
    private func integrity(stateDirectory: String) -> String {
        let sibling = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("workoutd").path
        let workoutd = FileManager.default.isExecutableFile(atPath: sibling) ? sibling : "workoutd"
        return "$ workoutd check-db --state-dir \(stateDirectory)\n"
            + Self.run(workoutd, ["check-db", "--state-dir", stateDirectory], keepStatus: true)
    }

    /// `udevadm info` for each device node the daemon serves.
    private func udev(nodes: [String]) -> String {
        guard !nodes.isEmpty else { return "no devices attached (or the daemon did not answer)" }
        return nodes.map {
            "$ udevadm info --query=all --name=\($0)\n" + Self.run("udevadm", ["info", "--query=all", "--name=\($0)"])
        }
        .joined(separator: "\n")
    }

    static func readme(_ names: [String]) -> String {
        """
        workoutd support archive, written by `workoutctl diagnose`.

        Values that were secrets (passwords, tokens, credentials in URLs, webhook paths and queries, share
        commands' arguments) are replaced by \(Redaction.marker), in every file. A file whose source was not
        there (no daemon, no journal, no systemd, no udev) says so instead.

        Files: \(names.joined(separator: ", ")).
        """
    }

    /// `state_dir` at the top level of the configuration, if set there.
    static func stateDirectory(in yaml: String) -> String? {
        values(of: "state_dir", in: yaml, topLevelOnly: true).first
    }

    /// The values of `key` wherever it appears in `yaml` (only unindented with `topLevelOnly`), unquoted.
    static func values(of key: String, in yaml: String, topLevelOnly: Bool = false) -> [String] {
        yaml.split(separator: "\n").compactMap { line in
            let body = Redaction.withoutComment(String(line))
            let trimmed = body.drop { $0 == " " }
            if topLevelOnly, trimmed.count != body.count { return nil }
            guard trimmed.hasPrefix(key + ":") else { return nil }
            let value = Redaction.unquoted(String(trimmed.dropFirst(key.count + 1)))
            return value.isEmpty ? nil : value
        }
    }

    /// What `program arguments…` printed (stdout and stderr), or why it could not run.
    ///
    /// With `keepStatus`, the text starts with `exit N`. Looked up on PATH; standard input is empty.
    static func run(_ program: String, _ arguments: [String], keepStatus: Bool = false) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.contains("/") ? program : "/usr/bin/env")
        process.arguments = program.contains("/") ? arguments : [program] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return (keepStatus ? "exit 127\n" : "") + "\(program) could not be run: \(error.localizedDescription)"
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        if keepStatus { return "exit \(process.terminationStatus)\n" + text }
        if process.terminationStatus == 127 { return "\(program) is not installed: \(text)" }
        return process.terminationStatus == 0 ? text : "\(program) exited \(process.terminationStatus): \(text)"
    }
}

import Foundation
import Testing
import WorkoutdTesting

/// `workoutctl diagnose`: one archive with what support asks for, and no secret in it.
@Suite struct DiagnoseTests {
    /// Secrets a configuration holds, each where operators put them.
    static let secrets = [
        "pg-S3cret-pass", "XyZhookSecret9", "qT0kenValue", "W3bhookPass", "cmdT0kenABC", "webT0kenFileValue",
        "typoT0kenValue",
    ]

    @Test func theArchiveHoldsWhatSupportNeedsAndNoSecret() throws {
        let wearable = try SimulatedWearable()
        let daemon = try ControlledDaemon(devices: [wearable.devicePath])
        try daemon.waitUntilConnected(wearable.devicePath)
        let tokenFile = daemon.directory.appendingPathComponent("web-token").path
        try "webT0kenFileValue\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let config = daemon.directory.appendingPathComponent("support.yaml").path
        try """
        log_level: info
        # the old password was pg-S3cret-pass
        replication:
          postgres_url: "postgres://hub:pg-S3cret-pass@db.example.org:5432/workouts?sslmode=verify-full"
          hub_id: gym-1
        shares:
          twitter:
            sink: webhook
            url: https://hooks.example.com/services/T000/B000/XyZhookSecret9?token=qT0kenValue
          facebook:
            sink: webhook
            url: "https://bob:W3bhookPass@hook.example.net/post"
          instagram:
            sink: command
            command:
              - /usr/bin/curl
              - -H
              - "Authorization: Bearer cmdT0kenABC"
        web:
          listen: 0.0.0.0:8470
          token_file: \(tokenFile)
        api_token: typoT0kenValue
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let archive = daemon.directory.appendingPathComponent("support.tar.gz").path
        let state = daemon.directory.appendingPathComponent("state").path

        let run = try daemon.ctl(["diagnose", "--config", config, "--state-dir", state, "--output", archive])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("wrote \(archive)"))

        let extracted = daemon.directory.appendingPathComponent("extracted")
        try FileManager.default.createDirectory(at: extracted, withIntermediateDirectories: true)
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tar.arguments = ["tar", "-xzf", archive, "-C", extracted.path]
        try tar.run()
        tar.waitUntilExit()
        #expect(tar.terminationStatus == 0)
        let folders = try FileManager.default.contentsOfDirectory(atPath: extracted.path)
        #expect(folders.count == 1 && folders[0].hasPrefix("workoutd-diagnose-"), "\(folders)")
        let folder = extracted.appendingPathComponent(folders.first ?? "")
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        }

        for secret in Self.secrets {
            for (name, text) in files {
                #expect(!text.contains(secret), "\(secret) in \(name):\n\(text)")
            }
        }
        let yaml = try #require(files["config.yaml"])
        #expect(
            yaml.contains("postgres://hub:**REDACTED**@db.example.org:5432/workouts?sslmode=verify-full"),
            "\(yaml)"
        )
        #expect(yaml.contains("url: \"https://hooks.example.com/**REDACTED**\""), "\(yaml)")
        #expect(yaml.contains("- /usr/bin/curl"), "a share command keeps its program")
        #expect(yaml.contains("hub_id: gym-1"), "what is not secret stays")
        #expect(yaml.contains("api_token: \"**REDACTED**\""), "\(yaml)")

        #expect(files["system.txt"]?.contains("daemon version: 0.2.0") == true, "\(files["system.txt"] ?? "")")
        #expect(files["system.txt"]?.contains("architecture: ") == true)
        #expect(files["status.json"]?.contains("\"devicesConnected\" : 1") == true, "\(files["status.json"] ?? "")")
        #expect(files["devices.json"]?.contains(wearable.devicePath) == true)
        #expect(files["replication.json"] != nil)
        #expect(files["integrity.txt"]?.contains("exit 0\nok: the database") == true, "\(files["integrity.txt"] ?? "")")
        #expect(files["udev.txt"]?.contains("udevadm info --query=all --name=\(wearable.devicePath)") == true)
        // Tolerated when absent (a container has no journal or systemd): the file says so.
        #expect(files["journal.txt"]?.isEmpty == false)
        #expect(files["unit.txt"]?.isEmpty == false)
        #expect(files["README.txt"]?.contains("**REDACTED**") == true)
    }

    @Test func withoutADaemonTheArchiveSaysSo() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "diag-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let archive = directory.appendingPathComponent("out.tar.gz").path
        let run = try Workoutctl.run([
            "--socket", directory.appendingPathComponent("none.sock").path, "diagnose",
            "--config", directory.appendingPathComponent("absent.yaml").path, "--state-dir", directory.path,
            "--output", archive,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: archive))
    }
}

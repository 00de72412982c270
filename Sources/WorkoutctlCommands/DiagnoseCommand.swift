import ArgumentParser
import ControlProtocol
import Foundation
import WorkoutProtocol

/// `workoutctl diagnose`: one redacted archive an operator can send to support.
struct DiagnoseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagnose",
        abstract: "Write a support archive (tar.gz) with secrets replaced by **REDACTED**.",
        discussion: """
            The archive holds: the version and architecture; the configuration with passwords, tokens, URL \
            credentials and share commands' arguments replaced; status, devices and replication from the \
            daemon; the last lines of its journal (journalctl -u workoutd); the database integrity check \
            (workoutd check-db, read-only); the unit and its drop-ins (systemctl cat workoutd); udev's view \
            of each wearable (udevadm info). What cannot be had (no daemon, no journal, no systemd) is said \
            in its file instead. Every file is scrubbed of the secrets found, wherever they appear; look \
            through the archive before sending it all the same.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("The daemon's configuration file.", valueName: "path"))
    var config = "/etc/workoutd/workoutd.yaml"

    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp(
            "The daemon's state directory (default: state_dir from the configuration).",
            valueName: "path"
        )
    )
    var stateDirectory: String?

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Where to write the archive (default: workoutd-diagnose-<time>.tar.gz here).",
            valueName: "path"
        )
    )
    var output: String?

    @Option(name: .long, help: "Journal lines to include.")
    var lines = 200

    func validate() throws {
        if lines <= 0 { throw ValidationError("--lines must be positive") }
    }

    func run() throws {
        let bundle = SupportBundle(
            socket: options.socket,
            configurationFile: config,
            stateDirectory: stateDirectory,
            journalLines: lines
        )
        let name = "workoutd-diagnose-" + SupportBundle.stamp(Date())
        let archive = output ?? FileManager.default.currentDirectoryPath + "/\(name).tar.gz"
        do {
            try bundle.write(archive: archive, folder: name)
        } catch {
            FileHandle.standardError.write(Data("workoutctl: \(UntrustedText.escaped("\(error)"))\n".utf8))
            throw ExitCode.failure
        }
        Output.text(
            "wrote \(archive)\nLook through it before sending it: secrets found are shown as \(Redaction.marker).\n"
        )
    }
}

import ArgumentParser
import Foundation
import SerialTransport

#if canImport(Glibc)
import Glibc
#endif

/// `workoutd conformance`: grades a wearable by playing the hub on its serial port.
///
/// The hub injects faults into its answers.
struct ConformanceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Play the hub on a wearable's serial port, inject faults and grade the wearable against rules R1-R6.",
        discussion: """
            For wearable makers: connect the wearable (or its firmware on a pty) to PATH and let it run its \
            commands. The hub answers as workoutd does, but drops a reply, holds one past the wearable's timeout, \
            answers rate_limited and storage_unavailable, and ends replies in CRLF. Each rule (docs/protocol.md, \
            "Conformance rules") is reported PASS, FAIL or NOT TESTED (the wearable never did what it is judged on). \
            The session ends when the wearable closes the port, sends nothing for 5 s with nothing left to answer, \
            or after --seconds.
            Exit status: 0 every rule passed; 1 a rule failed (the report names it); 2 no rule failed but one was \
            not tested; 64 bad usage; 66 the device cannot be opened; 74 the port failed during the session.
            """
    )

    /// EX_NOINPUT from sysexits(3): the device does not exist or cannot be opened.
    static let unopenableExitStatus: Int32 = 66
    /// EX_IOERR from sysexits(3): reading or writing the port failed.
    static let portExitStatus: Int32 = 74
    /// The longest session `--seconds` allows.
    static let maximumSeconds = 3600

    @Option(name: .long, help: "The wearable's serial port (a tty, a pty, a socat link).")
    var device: String

    @Flag(name: .long, help: "Print the report as one JSON object instead of text.")
    var json = false

    @Option(name: .long, help: "End the session after this many seconds at most.")
    var seconds: Int = 30

    func validate() throws {
        guard (1...Self.maximumSeconds).contains(seconds) else {
            throw ValidationError("--seconds must be from 1 to \(Self.maximumSeconds); got \(seconds).")
        }
    }

    func run() throws {
        let descriptor: CInt
        do {
            descriptor = try SerialPort.open(path: device, baud: SerialTransportConfiguration.defaultBaud)
        } catch {
            FileHandle.standardError.write(Data("workoutd conformance: cannot open the device: \(error)\n".utf8))
            throw ExitCode(Self.unopenableExitStatus)
        }
        defer { close(descriptor) }
        FileHandle.standardError.write(
            Data("workoutd conformance: playing the hub on \(device) for up to \(seconds) s\n".utf8)
        )
        let session = ConformanceSession(
            descriptor: descriptor,
            device: device,
            limit: .seconds(seconds),
            maximumLineLength: PipelineOptions.defaultMaximumLineLength,
            trace: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
        )
        let report: ConformanceReport
        do {
            report = try session.run()
        } catch {
            FileHandle.standardError.write(Data("workoutd conformance: \(device): \(error)\n".utf8))
            throw ExitCode(Self.portExitStatus)
        }
        let output = try json ? report.json() : report.text
        FileHandle.standardOutput.write(Data(output.utf8))
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }
}

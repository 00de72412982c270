import ArgumentParser
import ControlProtocol
import Foundation
import WorkoutProtocol

/// Options every subcommand takes, before or after its name.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The daemon's control socket.", valueName: "path"))
    var socket: String = ControlSocket.defaultPath

    @Flag(name: .long, help: "One JSON object per line instead of a table.")
    var json = false

    /// A connection to the daemon; without one, the run ends with the one-line reason.
    func connect() -> ControlConnection {
        do {
            return try ControlConnection(path: socket)
        } catch {
            Failure(error).report()
        }
    }
}

/// Ends the run with one line on stderr.
///
/// 69 (EX_UNAVAILABLE) when the daemon is not running, 2 when `send` names a device that is not connected, 1 otherwise.
struct Failure {
    let error: ControlConnectionError

    init(_ error: ControlConnectionError) { self.error = error }

    var exitCode: ExitCode {
        switch error {
        case .notRunning: ExitCode(69)
        case .rejected(let reason) where reason.code == .unknownDevice: ExitCode(2)
        default: .failure
        }
    }

    func report() -> Never {
        // The daemon's reason may quote what was asked (a device name, a line): escaped like every output.
        FileHandle.standardError.write(Data("workoutctl: \(UntrustedText.escaped("\(error)"))\n".utf8))
        Foundation.exit(exitCode.rawValue)
    }
}

extension ControlConnection {
    /// The result of `call`, or the process ends with the daemon's error.
    func result<Value: Codable & Sendable>(_ call: ControlCall, as type: Value.Type = Value.self) -> Value {
        do {
            return try self.call(call, as: type)
        } catch {
            Failure(error).report()
        }
    }
}

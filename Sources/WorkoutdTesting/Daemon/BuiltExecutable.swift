import Foundation

/// Finds an executable of this package.
///
/// The one an environment variable names, else the one built beside the test bundle (SwiftPM puts products and test
/// bundles in the same directory).
public enum BuiltExecutable {
    public static func path(named name: String, overriddenBy variable: String) throws -> String {
        if let path = ProcessInfo.processInfo.environment[variable] { return path }
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw TestingError("\(name) binary not found beside \(bundleDirectory.path); build it or set \(variable)")
    }
}

import Foundation
import Testing
import WorkoutProtocol

/// The version is set in `WorkoutdVersion.current` alone; the Debian package must carry the same one.
@Suite struct VersionTests {
    /// The root of the package, two folders above this file.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func debianPackageVersionIsTheSourceVersion() throws {
        let changelog = try String(
            contentsOf: Self.packageRoot.appendingPathComponent("debian/changelog"),
            encoding: .utf8
        )
        let firstLine = try #require(changelog.split(separator: "\n").first)
        #expect(firstLine.hasPrefix("workoutd (\(WorkoutdVersion.current)) "), "\(firstLine)")
    }

    @Test func theMakefileReadsTheSourceVersion() throws {
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/make")
        make.arguments = ["-s", "-C", Self.packageRoot.path, "print-version"]
        let output = Pipe()
        make.standardOutput = output
        try make.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        make.waitUntilExit()
        #expect(make.terminationStatus == 0)
        #expect(String(decoding: data, as: UTF8.self) == "\(WorkoutdVersion.current)\n")
    }
}

// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "workoutd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "workoutd", targets: ["workoutd"]),
        .library(name: "WorkoutProtocol", targets: ["WorkoutProtocol"]),
        .library(name: "WorkoutEngine", targets: ["WorkoutEngine"]),
        .library(name: "SerialTransport", targets: ["SerialTransport"]),
        .library(name: "WorkoutdTesting", targets: ["WorkoutdTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["YAML"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // Wire protocol: Codable commands and replies. No I/O.
        .target(name: "WorkoutProtocol", swiftSettings: strict),

        // Per-device sessions, handlers, and the storage/delivery protocols they run against.
        .target(
            name: "WorkoutEngine",
            dependencies: [
                "WorkoutProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // termios, TIOCEXCL and pty allocation, which Glibc does not expose to Swift.
        .target(name: "CPosixTTY", cSettings: [.define("_GNU_SOURCE")]),

        // Serial devices: opening ttys and the NIO channel pipeline that turns bytes into replies.
        .target(
            name: "SerialTransport",
            dependencies: [
                "WorkoutProtocol",
                "WorkoutEngine",
                "CPosixTTY",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // Ready harness for tests: a simulated wearable on a pty and a daemon launcher.
        .target(
            name: "WorkoutdTesting",
            dependencies: ["CPosixTTY", "WorkoutProtocol"],
            swiftSettings: strict
        ),

        // The daemon: composition root.
        .executableTarget(
            name: "workoutd",
            dependencies: [
                "WorkoutProtocol",
                "WorkoutEngine",
                "SerialTransport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        .testTarget(name: "WorkoutProtocolTests", dependencies: ["WorkoutProtocol"], swiftSettings: strict),
        .testTarget(name: "WorkoutEngineTests", dependencies: ["WorkoutEngine", "WorkoutProtocol"], swiftSettings: strict),
        .testTarget(
            name: "SerialTransportTests",
            dependencies: [
                "SerialTransport", "WorkoutEngine", "WorkoutProtocol", "WorkoutdTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["WorkoutdTesting", "WorkoutProtocol"],
            swiftSettings: strict
        ),
    ]
)

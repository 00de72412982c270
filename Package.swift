// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "workoutd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "workoutd", targets: ["workoutd"]),
        .library(name: "WorkoutDaemon", targets: ["WorkoutDaemon"]),
        .library(name: "WorkoutProtocol", targets: ["WorkoutProtocol"]),
        .library(name: "WorkoutEngine", targets: ["WorkoutEngine"]),
        .library(name: "SerialTransport", targets: ["SerialTransport"]),
        .library(name: "WorkoutdTesting", targets: ["WorkoutdTesting"]),
        // For the drivers in Benchmarks/ (a package of their own).
        .library(name: "DeviceDiscovery", targets: ["DeviceDiscovery"]),
        .library(name: "Replication", targets: ["Replication"]),
        .library(name: "WorkoutStorage", targets: ["WorkoutStorage"]),
        .executable(name: "workoutctl", targets: ["workoutctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["YAML"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // The web page and HTTP API. No package traits: the server needs none of their extras.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4", traits: []),
        .package(url: "https://github.com/swift-server/swift-openapi-hummingbird", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // Strict JSON: the RFC 8259 validator, the flat-object reader commands are decoded with, and the
        // ordered writer replies are encoded with. No I/O, nothing of workoutd's protocol.
        .target(name: "StrictJSON", swiftSettings: strict),

        // Wire protocol: Codable commands and replies. No I/O.
        .target(name: "WorkoutProtocol", dependencies: ["StrictJSON"], swiftSettings: strict),

        // Small pieces the daemon's services share: the retry backoff and a task executor on an event loop.
        .target(
            name: "ServiceSupport",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strict
        ),

        // Per-device sessions, handlers, and the storage/delivery protocols they run against.
        .target(
            name: "WorkoutEngine",
            dependencies: [
                "WorkoutProtocol",
                "CPosixTTY",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // termios, TIOCEXCL and pty allocation, which Glibc does not expose to Swift.
        .target(name: "CPosixTTY", cSettings: [.define("_GNU_SOURCE")]),

        // A VFS over SQLite's own that hands a commit's WAL frames to the kernel in one write.
        .target(name: "CWALWriteGathering", linkerSettings: [.linkedLibrary("sqlite3")]),

        // Serial devices: opening ttys and the NIO channel pipeline that turns bytes into replies.
        .target(
            name: "SerialTransport",
            dependencies: [
                "ServiceSupport",
                "WorkoutProtocol",
                "WorkoutEngine",
                "CPosixTTY",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // Control socket wire format shared by the daemon and workoutctl: Codable requests, replies, events. No I/O.
        .target(name: "ControlProtocol", dependencies: ["StrictJSON", "WorkoutProtocol"], swiftSettings: strict),

        // The daemon's control socket: a Unix-socket JSON-lines server, its methods, the event stream, metrics tallies.
        .target(
            name: "ControlPlane",
            dependencies: [
                "ControlProtocol", "SerialTransport", "WorkoutEngine", "WorkoutProtocol", "CPosixTTY",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // `workoutctl`'s commands: see and steer the running daemon through its control socket. Linked into
        // `workoutd` too, which runs them when invoked as `workoutctl` (the installed workoutctl is a symlink).
        // Also the blocking control-socket client (for workoutctl and tests) and the text tables that
        // `workoutd workouts/shares` print the same way.
        .target(
            name: "WorkoutctlCommands",
            dependencies: [
                "ControlProtocol", "WorkoutProtocol", "CPosixTTY",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // A `workoutctl` of its own in debug builds, which the tests run by path; `make install` installs a symlink.
        .executableTarget(name: "workoutctl", dependencies: ["WorkoutctlCommands"], swiftSettings: strict),

        // Test support, one module (as HummingbirdTesting): the daemon as a process and a simulated wearable on a pty
        // (Daemon/, Wearable/), one device's path run in memory with the invariants hostile input must not break
        // (Devices/: the fuzzer and the property tests), mock wearables on a umockdev testbed (Udev/), command-line
        // builders (Fixtures/), transcripts run in process or live (Transcripts/).
        .target(
            name: "WorkoutdTesting",
            dependencies: [
                "CPosixTTY", "CUmockdev", "SerialTransport", "StrictJSON", "WorkoutEngine", "WorkoutProtocol",
                "WorkoutDaemon", "WorkoutctlCommands", "ControlProtocol", "ServiceSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // Durable WorkoutStore: SQLite through GRDB, one database file in the state directory.
        .target(
            name: "WorkoutStorage",
            dependencies: [
                "CWALWriteGathering",
                "StrictJSON",
                "WorkoutEngine",
                "WorkoutProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),

        // Delivering queued shares: spool files, webhooks, external commands, and the worker that drives them.
        .target(
            name: "ShareDelivery",
            dependencies: [
                "WorkoutEngine",
                "WorkoutProtocol",
                "StrictJSON",
                "ServiceSupport",
                // pidfds and posix_spawn's closefrom for the exec sink.
                "CPosixTTY",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // Shipping committed workouts and shares to a central PostgreSQL, exactly once, in commit order.
        .target(
            name: "Replication",
            dependencies: [
                "WorkoutEngine",
                "WorkoutProtocol",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // The HTTP API's contract (Sources/WebAPI/openapi.yaml) and the types, server stubs and client generated from
        // it (`make openapi`); its schemas are ControlProtocol's own types (typeOverrides), so the control socket and
        // the API encode one model.
        .target(
            name: "WebAPI",
            dependencies: [
                "ControlProtocol", "WorkoutProtocol",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            swiftSettings: strict
        ),

        // The web page and the HTTP API (`web.listen`): Hummingbird, answering from the control socket's responder.
        // Also the fleet page (`workoutd fleet`) on the same listener, reading the central database over Replication's
        // link.
        .target(
            name: "WebServer",
            dependencies: [
                "WebAPI", "ControlPlane", "ControlProtocol", "WorkoutProtocol", "Replication",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // libudev (Debian libudev-dev) as a Swift module.
        .systemLibrary(name: "CLibudev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),

        // Finding the wearable: libudev enumeration and hotplug monitor, match rules, the discovery service.
        .target(
            name: "DeviceDiscovery",
            dependencies: [
                "CLibudev",
                "SerialTransport",
                "WorkoutEngine",
                "WorkoutProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // libumockdev (Debian libumockdev-dev): the mock sysfs/udev testbed of WorkoutdTesting (tests, the hotplug benchmark).
        .systemLibrary(name: "CUmockdev", pkgConfig: "umockdev-1.0", providers: [.apt(["libumockdev-dev"])]),

        // libsystemd (Debian libsystemd-dev): sd_notify and the watchdog, as a Swift module.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),

        // glibc's mallopt, for the daemon's allocator limits (Sources/WorkoutDaemon/Memory/AllocatorLimits.swift).
        .systemLibrary(name: "CMalloc"),

        // Running under systemd: READY/STATUS/STOPPING notifications, the watchdog pinger, journal detection.
        .target(
            name: "SystemdSupport",
            dependencies: [
                "CSystemd",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // The daemon as a library: configuration, the composition root and its services, reload, the
        // inspection commands. Tests run it in process; `workoutd` is its thin entry point.
        .target(
            name: "WorkoutDaemon",
            dependencies: [
                "StrictJSON",
                "ServiceSupport",
                "WorkoutProtocol",
                "WorkoutEngine",
                "SerialTransport",
                "WorkoutStorage",
                "ShareDelivery",
                "Replication",
                "ControlPlane",
                "ControlProtocol",
                "SystemdSupport",
                "CMalloc",
                "DeviceDiscovery",
                "WorkoutctlCommands",
                "WebServer",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
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

        // The `workoutd` binary: picks `workoutd` or `workoutctl` by the name it was started under.
        .executableTarget(
            name: "workoutd",
            dependencies: ["WorkoutDaemon", "WorkoutctlCommands"],
            swiftSettings: strict
        ),

        .testTarget(
            name: "WorkoutProtocolTests",
            dependencies: ["StrictJSON", "WorkoutProtocol"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WorkoutEngineTests",
            dependencies: ["WorkoutEngine", "WorkoutProtocol", "WorkoutdTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SerialTransportTests",
            dependencies: [
                "SerialTransport", "WorkoutEngine", "WorkoutProtocol", "WorkoutStorage", "WorkoutdTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WorkoutStorageTests",
            dependencies: [
                "WorkoutStorage", "ShareDelivery", "WorkoutEngine", "WorkoutProtocol", "WorkoutdTesting",
                "CWALWriteGathering",
            ],
            swiftSettings: strict
        ),
        // Share delivery: its sinks (spool, webhook, exec) and the worker, over a real SQLite store.
        .testTarget(
            name: "ShareDeliveryTests",
            dependencies: [
                "ShareDelivery", "ServiceSupport", "WorkoutStorage", "WorkoutEngine", "WorkoutProtocol",
                "WorkoutdTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DeviceDiscoveryTests",
            dependencies: [
                "DeviceDiscovery", "WorkoutdTesting", "ControlProtocol", "SerialTransport", "WorkoutEngine",
                "WorkoutProtocol",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SystemdSupportTests",
            dependencies: [
                "SystemdSupport", "WorkoutdTesting", "WorkoutProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The assembled daemon: its control socket, workoutctl, reload, the inspection commands, storage faults.
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "WorkoutdTesting", "WorkoutctlCommands", "ControlProtocol", "WorkoutProtocol", "WorkoutEngine",
                "WorkoutDaemon",
            ],
            swiftSettings: strict
        ),
        // workoutctl's text output without a daemon: tables, widths, escaping.
        .testTarget(
            name: "WorkoutctlCommandsTests",
            dependencies: ["WorkoutctlCommands", "ControlProtocol"],
            swiftSettings: strict
        ),
        // The HTTP API through its generated client against the real daemon, and the web server's parts.
        .testTarget(
            name: "WebServerTests",
            dependencies: [
                "WebServer", "WebAPI", "WorkoutdTesting", "WorkoutProtocol", "ControlProtocol", "Replication",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["WorkoutdTesting", "WorkoutProtocol"],
            swiftSettings: strict
        ),
        // Faults against the real daemon: kill -9 under load, a corrupt database, a full disk.
        .testTarget(
            name: "DurabilityTests",
            dependencies: ["WorkoutdTesting", "WorkoutProtocol"],
            swiftSettings: strict
        ),

        // Replication against a private PostgreSQL cluster: exactly once, outages, kill -9, twenty hubs, bad servers.
        .testTarget(
            name: "ReplicationTests",
            dependencies: [
                "WorkoutdTesting", "WorkoutProtocol", "Replication",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),

        // libFuzzer target (scripts/fuzz.sh builds it with -sanitize=fuzzer); a plain build replays corpus files.
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .executableTarget(
            name: "WorkoutdFuzzer",
            dependencies: ["WorkoutdTesting", "CLibFuzzer"],
            path: "Fuzz/WorkoutdFuzzer",
            swiftSettings: strict
        ),
        .testTarget(
            name: "PropertyTests",
            dependencies: [
                "WorkoutdTesting", "WorkoutProtocol",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        // gpsd-style regression logs: every Tests/Transcripts/*.transcript replayed in process (the device pipeline on a
        // test channel) and against the real daemon on a pty.
        .testTarget(
            name: "TranscriptTests",
            dependencies: ["WorkoutdTesting", "WorkoutProtocol"],
            swiftSettings: strict
        ),
    ]
)

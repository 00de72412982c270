// swift-tools-version: 6.1
// `make bench` and `make soak` drivers, a package of their own (as swift-nio keeps its benchmarks) so that
// `swift build` of workoutd builds the product only. They use workoutd's library products through a path
// dependency; Benchmarks/bench-build.sh builds them (and workoutd) in release mode with a scratch path of their own.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "workoutd-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "workoutd", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // What the drivers share: their command-line flags.
        .target(name: "BenchmarkSupport", swiftSettings: strict),

        // Part hotplug: udev add → first ack latency, and 16-device vs 1-device throughput (run under umockdev-wrapper).
        .executableTarget(
            name: "HotplugBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DeviceDiscovery", package: "workoutd"),
                .product(name: "WorkoutdTesting", package: "workoutd"),
                .product(name: "SerialTransport", package: "workoutd"),
                .product(name: "WorkoutEngine", package: "workoutd"),
                .product(name: "WorkoutProtocol", package: "workoutd"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // Reference for part pty: the daemon's transport (NIO pipe channel) answering with a fixed reply.
        .executableTarget(
            name: "NIOEchoBaseline",
            dependencies: [
                .product(name: "SerialTransport", package: "workoutd"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),

        // epoll and eventfd for SessionBehindEpoll (Glibc's module leaves them out).
        .target(name: "CEpoll"),

        // Reference for part cpu: workoutd's session and store behind an epoll loop of its own (no NIO).
        .executableTarget(
            name: "SessionBehindEpoll",
            dependencies: [
                "CEpoll",
                .product(name: "SerialTransport", package: "workoutd"),
                .product(name: "WorkoutEngine", package: "workoutd"),
                .product(name: "WorkoutProtocol", package: "workoutd"),
                .product(name: "WorkoutStorage", package: "workoutd"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),

        // Part pty: pipelined throughput and single-flight latency through a pty, beside the C echo baseline.
        .executableTarget(
            name: "WorkoutdBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "WorkoutdTesting", package: "workoutd"),
                .product(name: "WorkoutProtocol", package: "workoutd"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strict
        ),

        // Part replication: lag from a start_workout's reply on a pty to its row in PostgreSQL.
        .executableTarget(
            name: "ReplicationLag",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "WorkoutdTesting", package: "workoutd"),
                .product(name: "WorkoutProtocol", package: "workoutd"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // Part fleet: many hubs (the daemon's store, engine and shipper each) into one PostgreSQL through a pooler.
        .executableTarget(
            name: "FleetBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Replication", package: "workoutd"),
                .product(name: "WorkoutStorage", package: "workoutd"),
                .product(name: "WorkoutEngine", package: "workoutd"),
                .product(name: "WorkoutProtocol", package: "workoutd"),
                .product(name: "WorkoutdTesting", package: "workoutd"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // `make soak`: several simulated devices, hostile traffic, replugs and a device that never reads, against one workoutd.
        .executableTarget(
            name: "SoakTest",
            dependencies: [
                .product(name: "WorkoutdTesting", package: "workoutd"),
                .product(name: "WorkoutProtocol", package: "workoutd"),
            ],
            swiftSettings: strict
        ),
    ]
)

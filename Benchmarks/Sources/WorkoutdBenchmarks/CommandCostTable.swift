import BenchmarkSupport
import Foundation

/// The `--count` report: what a single-flight command costs each program.
///
/// With the ratios the floors hold and the metrics recorded.
struct CommandCostTable {
    /// A program's role, which names its metrics (`cpu_us_per_command_durable`…).
    struct Row {
        var key: String
        var result: CommandCost.Result
    }

    var rows: [Row]
    var thresholds: Thresholds

    private func row(_ key: String) -> CommandCost.Result? { rows.first { $0.key == key }?.result }

    var metrics: [String: Double] {
        var metrics: [String: Double] = [:]
        for row in rows {
            metrics["cpu_us_per_command_\(row.key)"] = row.result.cpuMicroseconds
            if let mallocs = row.result.mallocs { metrics["mallocs_per_command_\(row.key)"] = mallocs }
            if let instructions = row.result.userInstructions {
                metrics["user_instructions_per_command_\(row.key)"] = instructions
            }
            if let instructions = row.result.kernelInstructions {
                metrics["kernel_instructions_per_command_\(row.key)"] = instructions
            }
        }
        for (name, subject, anchor) in Self.ratios {
            if let subject = row(subject), let anchor = row(anchor), anchor.cpuMicroseconds > 0 {
                metrics[name] = subject.cpuMicroseconds / anchor.cpuMicroseconds
            }
        }
        return metrics
    }

    /// The CPU ratios, each store against the program doing the same kernel work and nothing else.
    ///
    /// The in-memory store against its own transport too, and the transport against the C echo; the C echo behind
    /// epoll against the C echo, and the transport against the C echo behind epoll; the session behind epoll against the
    /// C echo and the C echo behind epoll, and the in-memory store against it; the durable session behind epoll against
    /// the C durable echo, and the durable store against it.
    static let ratios = [
        ("cpu_durable_over_durable_echo", "durable", "durable_echo"),
        ("cpu_durable_over_python_peer", "durable", "python_peer"),
        ("cpu_in_memory_over_echo", "in_memory", "echo"),
        ("cpu_in_memory_over_transport_echo", "in_memory", "transport_echo"),
        ("cpu_transport_echo_over_echo", "transport_echo", "echo"),
        ("cpu_epoll_echo_over_echo", "epoll_echo", "echo"),
        ("cpu_transport_echo_over_epoll_echo", "transport_echo", "epoll_echo"),
        ("cpu_session_epoll_over_echo", "session_epoll", "echo"),
        ("cpu_session_epoll_over_epoll_echo", "session_epoll", "epoll_echo"),
        ("cpu_in_memory_over_session_epoll", "in_memory", "session_epoll"),
        ("cpu_session_epoll_durable_over_durable_echo", "session_epoll_durable", "durable_echo"),
        ("cpu_durable_over_session_epoll_durable", "durable", "session_epoll_durable"),
    ]

    var markdown: String {
        func figure(_ value: Double?, _ format: String) -> String { value.map { String(format: format, $0) } ?? "–" }
        var lines = [
            "| program (single flight, per command) | CPU µs (user + system) | user µs | system µs | CPU µs per round | mallocs | instructions (user / kernel) |",
            "|---|---:|---:|---:|---|---:|---:|",
        ]
        for row in rows {
            let result = row.result
            let instructions =
                result.userInstructions == nil && result.kernelInstructions == nil
                ? "not countable here"
                : "\(figure(result.userInstructions, "%.0f")) / \(figure(result.kernelInstructions, "%.0f"))"
            let perRound = result.cpuMicrosecondsPerRound.map { String(format: "%.1f", $0) }.joined(separator: ", ")
            lines.append(
                "| \(result.name) | \(String(format: "%.1f", result.cpuMicroseconds)) | \(String(format: "%.1f", result.userMicroseconds)) | \(String(format: "%.1f", result.systemMicroseconds)) | \(perRound) | \(figure(result.mallocs, "%.1f")) | \(instructions) |"
            )
        }
        // The floors on these figures are listed with every other part's (docs/benchmarks.md, "Floors").
        lines += ["", "| figure | measured |", "|---|---:|"]
        let metrics = metrics
        for (name, value) in metrics.sorted(by: { $0.key < $1.key }) {
            let isRatio = Self.ratios.contains { $0.0 == name }
            guard isRatio || !thresholds.floors(on: name).isEmpty else { continue }
            lines.append("| \(name) | \(String(format: isRatio ? "%.2f" : "%.1f", value)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    var floors: [(label: String, value: Double, passed: Bool, requirement: String)] {
        var floors: [(label: String, value: Double, passed: Bool, requirement: String)] = []
        for (name, value) in metrics.sorted(by: { $0.key < $1.key }) {
            for floor in thresholds.floors(on: name) {
                floors.append((name, value, floor.isMet(by: value), floor.requirement))
            }
        }
        return floors
    }
}

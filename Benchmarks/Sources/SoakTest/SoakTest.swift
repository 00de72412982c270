import Foundation
import Synchronization
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// `make soak`: several simulated devices against one workoutd for a set time.
///
/// The devices send hostile traffic, go through unplug/replug cycles, and one of them never reads. Fails (exit 1) on a
/// missing or broken reply, a daemon that dies, RSS that grows, or descriptors that leak.
@main
enum SoakTest {
    /// Descriptors the daemon may hold under its state directory.
    ///
    /// GRDB's pool (writer + 5 readers, its default, each with the database and its WAL open, plus the shared -shm),
    /// one spool file being written and the state directory's lock (`workoutd.lock`, held for the daemon's life: with
    /// replication reading beside the devices, as in long mode, every reader is open at once and the lock made it 15).
    static let stateDescriptorBound = 2 * (1 + 5) + 1 + 1 + 1

    static func main() {
        do {
            exit(try run() ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("soak: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() throws -> Bool {
        let options = try SoakOptions(environment: ProcessInfo.processInfo.environment)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "workoutd-soak-\(UUID().uuidString)"
        ).path
        let stateDirectory = directory + "/state"
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let links = try (0..<options.readingDevices).map { try ReplugLink(path: "\(directory)/wearable\($0)") }
        let devices = links.enumerated().map {
            SoakDevice(name: "wearable\($0.offset)", link: $0.element, firstID: Int64($0.offset) * 1_000_000_000)
        }
        let stuck = try StuckDevice()
        // Long mode: replication to a real PostgreSQL (with outages) and reloads, from a configuration file.
        let long = options.long ? try LongModeHarness() : nil
        let configuration = try long.map { try ["--config", $0.configuration(in: directory)] } ?? []
        let daemon = try DaemonProcess(
            arguments: links.flatMap { ["--device", $0.path] } + configuration
                + ["--device", stuck.wearable.devicePath, "--state-dir", stateDirectory, "--log-level", "notice"]
        )
        defer { daemon.stop() }
        let pid = daemon.process.processIdentifier
        print(
            "soak: workoutd pid \(pid), \(options.readingDevices) reading devices + 1 never reading, \(options.duration)"
        )

        for device in devices { try device.waitUntilServed() }
        usleep(500_000)
        let clockStart = ContinuousClock.now
        guard let first = ProcessSample.take(pid: pid, elapsed: .zero, stateDirectory: stateDirectory) else {
            throw SoakFailure("workoutd is not running:\n\(daemon.log)")
        }
        var samples = [first]

        let deadline = clockStart + options.duration
        let finished = DispatchGroup()
        for device in devices {
            finished.enter()
            Thread {
                device.run(until: deadline, replugPercent: options.replugPercent)
                finished.leave()
            }.start()
        }
        finished.enter()
        Thread {
            stuck.run(until: deadline)
            finished.leave()
        }.start()
        long?.run(until: deadline, options: options, daemon: daemon, finished: finished)

        while ContinuousClock.now < deadline {
            Thread.sleep(
                forTimeInterval: min(
                    options.sampleInterval.inSeconds,
                    max(0.01, (deadline - ContinuousClock.now).inSeconds)
                )
            )
            guard
                var sample = ProcessSample.take(
                    pid: pid,
                    elapsed: ContinuousClock.now - clockStart,
                    stateDirectory: stateDirectory
                )
            else {
                throw SoakFailure("workoutd died during the soak; its log: \(keepLog(of: daemon))")
            }
            sample.stuckDeviceBytes = stuck.bytesAccepted.load(ordering: .relaxed)
            (sample.latencyP50Milliseconds, sample.latencyP99Milliseconds) = ReplyLatency.shared.drain()
            samples.append(sample)
            if samples.count % 12 == 0 {
                print(
                    "soak: t=\(Int(sample.elapsed.inSeconds))s rss=\(sample.residentKiB)KiB fds=\(sample.openDescriptors) (state dir \(sample.stateDescriptors)) threads=\(sample.threads) db=\(sample.databaseBytes / 1024)KiB wal=\(sample.walBytes / 1024)KiB p99=\(String(format: "%.1f", sample.latencyP99Milliseconds))ms stuck-device-bytes=\(sample.stuckDeviceBytes)"
                )
            }
        }
        finished.wait()
        let elapsed = ContinuousClock.now - clockStart

        // Every reading device must be served again before descriptors are compared.
        for device in devices where device.tally.failure == nil { try device.waitUntilServed() }
        usleep(500_000)
        guard
            var final = ProcessSample.take(
                pid: pid,
                elapsed: ContinuousClock.now - clockStart,
                stateDirectory: stateDirectory
            )
        else {
            throw SoakFailure("workoutd died at the end of the soak; its log: \(keepLog(of: daemon))")
        }
        final.stuckDeviceBytes = stuck.bytesAccepted.load(ordering: .relaxed)
        // No batches ran since the last sample: its latency figures stand for the end of the run.
        final.latencyP50Milliseconds = samples.last?.latencyP50Milliseconds ?? 0
        final.latencyP99Milliseconds = samples.last?.latencyP99Milliseconds ?? 0
        samples.append(final)

        // The allocator and caches settle in the first minute; growth is measured from there.
        let settle = min(Duration.seconds(60), options.duration / 4)
        let baseline = samples.first { $0.elapsed >= settle } ?? first
        let growth = final.residentKiB - baseline.residentKiB
        let allowed = max(4096, baseline.residentKiB / 10)
        var verdicts: [String] = []
        var passed = true
        let failures = devices.compactMap(\.tally.failure)
        if failures.isEmpty {
            verdicts.append("every line answered with a valid reply")
        } else {
            passed = false
            verdicts.append("device failures: \(failures.joined(separator: "; "))")
        }
        if growth <= allowed {
            verdicts.append("RSS flat (\(growth) KiB growth after settling, limit \(allowed))")
        } else {
            passed = false
            verdicts.append("RSS grew \(growth) KiB after settling (limit \(allowed))")
        }
        // Compared from the settled sample too: what the runtime opens once on first use (libdispatch's timerfd for
        // the first timer after traffic began) is not a leak; a leak keeps growing after settling. Fewer is not one
        // (a socket open at 60 s may have closed by the end).
        if final.otherDescriptors <= baseline.otherDescriptors {
            let changes = baseline.descriptorChanges(to: final)
            verdicts.append(
                "no descriptor leak (\(baseline.otherDescriptors) at \(Int(baseline.elapsed.inSeconds)) s → \(final.otherDescriptors) outside the state directory\(changes.isEmpty ? "" : ", \(changes)"); \(first.otherDescriptors) at start)"
            )
        } else {
            passed = false
            verdicts.append(
                "descriptors outside the state directory \(baseline.otherDescriptors) at \(Int(baseline.elapsed.inSeconds)) s → \(final.otherDescriptors) (\(baseline.descriptorChanges(to: final)))"
            )
        }
        let stateMaximum = samples.map(\.stateDescriptors).max() ?? 0
        if stateMaximum <= stateDescriptorBound {
            verdicts.append(
                "state-directory descriptors within the SQLite pool's bound (max \(stateMaximum), limit \(stateDescriptorBound))"
            )
        } else {
            passed = false
            verdicts.append("state-directory descriptors reached \(stateMaximum) (limit \(stateDescriptorBound))")
        }
        if !daemon.process.isRunning {
            passed = false
            verdicts.append("workoutd exited")
        }

        let report = SoakReport(
            options: options,
            elapsed: elapsed,
            devices: devices.map(\.tally),
            stuckBytesAccepted: final.stuckDeviceBytes,
            samples: samples,
            baseline: baseline,
            final: final,
            verdicts: verdicts,
            passed: passed,
            showsOverTime: !options.long
        )
        print(report.markdown)
        if let path = options.reportPath {
            try report.write(to: path)
            print("soak: wrote the soak section of \(path)")
        }
        if let long {
            let drift = DriftReport(
                samples: samples,
                elapsed: elapsed,
                options: options,
                outages: long.outages,
                reloads: long.reloads,
                replugs: devices.map(\.tally.replugs).reduce(0, +),
                replies: report.totalReplies,
                centralWorkouts: long.centralWorkouts(),
                passed: passed
            )
            print(drift.markdown)
            if let path = options.reportPath {
                try drift.write(to: path)
                print("soak: wrote the long-mode section of \(path)")
            }
        }
        return passed
    }

    /// Copies the daemon's log (crash report included) out of the temporary directory removed on exit.
    static func keepLog(of daemon: DaemonProcess) -> String {
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent(
            "workoutd-soak-\(daemon.process.processIdentifier).log"
        ).path
        try? FileManager.default.removeItem(atPath: kept)
        return (try? FileManager.default.copyItem(atPath: daemon.logPath, toPath: kept)) != nil ? kept : daemon.logPath
    }
}

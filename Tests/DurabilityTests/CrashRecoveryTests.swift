import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

@Suite("kill -9 under a pipelined load loses nothing acknowledged", .serialized)
struct CrashRecoveryTests {
    static let cycles = 1500
    /// Replies read before the kill: about a third of the load, so the daemon dies mid-stream.
    static let killAfter = 1500
    /// Acknowledged commands sent again after the restart, as far as the remembered ids reach.
    static let resentAcknowledged = 200
    /// Ids whose replies the daemon remembers per device.
    static let rememberedIDs = 1024

    @Test func everyAcknowledgedCommandSurvivesAndRetriesCreateNoDuplicates() throws {
        let setup = try DurabilitySetup()
        defer { setup.remove() }
        let link = try SymlinkedWearable(in: setup.directory)
        let commands = CommandCycles.make(Self.cycles)

        // --- The load, and the kill in the middle of it.
        var daemon = try setup.startDaemon(device: link.devicePath)
        let writer = BackgroundWriter(link.wearable, lines: commands.map(\.line))
        var replies: [Reply] = []
        while replies.count < Self.killAfter {
            replies.append(try link.wearable.readReply(timeout: .seconds(20)))
        }
        daemon.signal(SIGKILL)
        #expect(try daemon.waitForExit() == SIGKILL, "the daemon was to die of SIGKILL, mid-load")
        writer.stop()
        // Whole lines already on the wire reached the wearable: those commands count as acknowledged too.
        while let line = try? link.wearable.readLine(timeout: .milliseconds(500)) {
            replies.append(try decode(line))
        }
        let written = writer.join()
        let acknowledged = Array(commands.prefix(replies.count))
        let unacknowledged = Array(commands.dropFirst(replies.count))
        print("kill -9 after \(replies.count) of \(commands.count) commands acknowledged (\(written) written)")
        try #require(replies.count < commands.count, "the kill came too late: every command was already answered")
        #expect(replies.map(\.id) == acknowledged.map(\.id), "replies come in command order, one each")
        #expect(
            replies.allSatisfy { $0.isSuccess && !$0.replayed },
            "\(replies.first { !$0.isSuccess }.map(String.init(describing:)) ?? "")"
        )

        // --- Offline, before anything else touches the store: every acknowledged effect is there.
        let committedUnacknowledged = try expectStored(
            acknowledged: zip(acknowledged, replies).map { $0 },
            in: setup.stateDirectory
        )
        // Those must all be remembered, or their resending would run them twice.
        try #require(
            committedUnacknowledged <= Self.rememberedIDs,
            "\(committedUnacknowledged) commands committed without their reply reaching the wearable: more than the \(Self.rememberedIDs) remembered ids"
        )

        // --- Restart on the same device path, resend acknowledged and unacknowledged commands.
        try link.replug()
        daemon = try setup.startDaemon(device: link.devicePath)
        defer { daemon.stop() }
        // Resending acknowledged ids first keeps them inside the window with the committed unacknowledged ones.
        let resent = min(Self.resentAcknowledged, Self.rememberedIDs - committedUnacknowledged)
        for (command, original) in zip(acknowledged, replies).suffix(resent) {
            var expected = original
            expected.replayed = true
            let reply = try decode(link.wearable.request(command.line, timeout: .seconds(20)))
            #expect(reply == expected, "\(command.id) was answered \(reply), not its original reply replayed")
        }
        let retry = BackgroundWriter(link.wearable, lines: unacknowledged.map(\.line))
        var retried: [Reply] = []
        while retried.count < unacknowledged.count {
            retried.append(try link.wearable.readReply(timeout: .seconds(20)))
        }
        #expect(retry.join() == unacknowledged.count)
        #expect(retried.map(\.id) == unacknowledged.map(\.id))
        #expect(
            retried.allSatisfy { $0.isSuccess },
            "\(retried.first { !$0.isSuccess }.map(String.init(describing:)) ?? "")"
        )
        let replayed = retried.filter(\.replayed).count
        // Committed but killed before the reply went out: answered from the store, not run again.
        #expect(
            replayed == committedUnacknowledged && retried.prefix(replayed).allSatisfy { $0.replayed },
            "replayed replies must be exactly the committed prefix of the unacknowledged commands"
        )
        print(
            "after restart: \(resent) acknowledged resent and replayed, \(unacknowledged.count) unacknowledged resent, \(replayed) of them had committed before the kill"
        )

        // --- Every cycle exactly once; shares delivered by the restarted daemon.
        try expectEveryCycleExactlyOnce(
            commands,
            replies: replies + retried,
            device: link.devicePath,
            in: setup.stateDirectory
        )
        try expectAllSharesDelivered(count: Self.cycles, in: setup.stateDirectory)
        #expect(daemon.process.isRunning)
    }

    private func decode(_ line: String) throws -> Reply {
        try JSONDecoder().decode(Reply.self, from: Data(line.utf8))
    }

    /// What an acknowledgement promised is in the database.
    ///
    /// The workout, its end, the queued share, with the ids replied. Returns how many commands beyond the acknowledged
    /// ones had committed (their replies were lost with the daemon).
    private func expectStored(acknowledged: [(LoadCommand, Reply)], in stateDirectory: String) throws -> Int {
        let storedWorkouts = try OfflineInspection.workouts(in: stateDirectory)
        let storedShares = try OfflineInspection.shares(in: stateDirectory)
        let workouts = Dictionary(storedWorkouts.map { ($0.id, $0) }) { first, _ in first }
        let shares = Dictionary(storedShares.map { ($0.id, $0) }) { first, _ in first }
        var missing: [String] = []
        for (command, reply) in acknowledged {
            switch reply.outcome {
            case .ok(.workoutStarted(let workoutID)):
                if workouts[workoutID]?.startCommandID != command.id {
                    missing.append("\(command.id) (workout \(workoutID))")
                }
            case .ok(.workoutEnded(let workoutID, _)):
                let workout = workouts[workoutID]
                if workout?.endCommandID != command.id || workout?.endedAt == nil {
                    missing.append("\(command.id) (workout \(workoutID))")
                }
            case .ok(.workoutShared(let workoutID, _, let shareID)):
                if shares[shareID]?.commandID != command.id || shares[shareID]?.workoutID != workoutID {
                    missing.append("\(command.id) (share \(shareID))")
                }
            case .error:
                missing.append("\(command.id) was refused")
            }
        }
        #expect(missing.isEmpty, "acknowledged before the kill but not in the store: \(missing.prefix(10))")
        let committed =
            storedWorkouts.count + storedWorkouts.filter { $0.endCommandID != nil }.count + storedShares.count
        print(
            "store after kill -9: \(acknowledged.count) acknowledged effects checked, \(missing.count) missing; \(committed - acknowledged.count) more committed"
        )
        return committed - acknowledged.count
    }

    private func expectEveryCycleExactlyOnce(
        _ commands: [LoadCommand],
        replies: [Reply],
        device: String,
        in stateDirectory: String
    ) throws {
        let workouts = try OfflineInspection.workouts(in: stateDirectory)
        let shares = try OfflineInspection.shares(in: stateDirectory)
        let starts = commands.filter { $0.type == .startWorkout }.map(\.id)
        let ends = commands.filter { $0.type == .endWorkout }.map(\.id)
        let shareIDs = commands.filter { $0.type == .shareWorkout }.map(\.id)
        #expect(workouts.count == Self.cycles, "\(workouts.count) workouts stored for \(Self.cycles) start commands")
        #expect(shares.count == Self.cycles, "\(shares.count) shares stored for \(Self.cycles) share commands")
        #expect(
            workouts.compactMap(\.startCommandID).sorted(by: { $0.description < $1.description })
                == starts.sorted(by: { $0.description < $1.description })
        )
        #expect(Set(workouts.compactMap(\.endCommandID)) == Set(ends) && workouts.allSatisfy { $0.endedAt != nil })
        #expect(
            shares.compactMap(\.commandID).sorted(by: { $0.description < $1.description })
                == shareIDs.sorted(by: { $0.description < $1.description })
        )
        #expect(workouts.allSatisfy { $0.device == device }, "sessions are keyed by the configured path")
        // Each share is of the workout its own cycle started, whichever daemon ran it.
        let workoutOfCycle = Dictionary(
            workouts.compactMap { w in w.startCommandID.map { ($0.description.dropFirst("start-".count), w.id) } }
        ) { first, _ in first }
        let mismatched = shares.filter { share in
            workoutOfCycle[share.commandID?.description.dropFirst("share-".count) ?? ""] != share.workoutID
        }
        #expect(mismatched.isEmpty, "shares of another cycle's workout: \(mismatched.prefix(5).map(\.id))")
        // The replies, old and new, name the stored rows.
        let startedIDs = replies.compactMap { reply -> Int64? in
            if case .ok(.workoutStarted(let id)) = reply.outcome { id } else { nil }
        }
        #expect(Set(startedIDs) == Set(workouts.map(\.id)))
        print(
            "final store: \(workouts.count) workouts, \(shares.count) shares for \(Self.cycles) cycles; duplicates: \(workouts.count - Set(workouts.compactMap(\.startCommandID)).count)"
        )
    }

    /// Share delivery resumes after the crash: every share ends up delivered, one spool file each.
    private func expectAllSharesDelivered(count: Int, in stateDirectory: String) throws {
        let deadline = ContinuousClock.now + .seconds(120)
        var pending = count
        while ContinuousClock.now < deadline {
            pending = try OfflineInspection.shares(in: stateDirectory).filter { $0.status != "delivered" }.count
            if pending == 0 { break }
            usleep(250_000)
        }
        #expect(pending == 0, "\(pending) shares still not delivered")
        let spooled = (try? FileManager.default.contentsOfDirectory(atPath: stateDirectory + "/outbox/twitter")) ?? []
        #expect(spooled.filter { $0.hasPrefix("share-") && $0.hasSuffix(".json") }.count == count)
    }
}

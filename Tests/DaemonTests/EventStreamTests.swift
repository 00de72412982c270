import ControlProtocol
import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

import class WorkoutctlCommands.ControlConnection

/// `workoutctl events` while commands flow: every event, in the order it happened.
@Suite(.serialized) struct EventStreamTests {
    @Test(arguments: DaemonTestMode.inLane)
    func eventsFollowCommandsInOrder(mode: DaemonTestMode) async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(mode, devices: [wearable.devicePath]) { daemon in
            try daemon.waitUntilConnected(wearable.devicePath)
            let events = try Workoutctl.start(["--socket", daemon.socket, "events", "--json"])
            defer { _ = try? events.interrupt() }
            // The stream prints nothing before the first event: ask the daemon when the subscription is live.
            try await waitForSubscribers(1, daemon: daemon)

            #expect(try wearable.request(CommandLines.start(id: 1, date: "2020-03-16T19:45:13Z")).contains("ok"))
            #expect(try wearable.request(CommandLines.end(id: 2)).contains("ok"))
            #expect(try wearable.request(CommandLines.share(id: 3, service: "facebook")).contains("ok"))
            #expect(try wearable.request("{").contains("malformed_json"))
            let sent = try daemon.ctl(["send", "--device", wearable.devicePath, CommandLines.end(id: 4)])
            #expect(sent.status == 1, "the reply is an error (no active workout)")
            wearable.unplug()

            let decoder = ControlSocket.makeDecoder()
            var received: [ControlEvent] = []
            while received.last?.detail.type != .deviceRemoved {
                let line = try await offloaded { try events.readLine() }
                received.append(try decoder.decode(ControlEvent.self, from: Data(line.utf8)))
            }
            // Delivery runs on its own worker, so `shareDelivered` lands wherever it happens to; the rest is in step.
            let flow = received.filter { $0.detail.type != .shareDelivered }
            #expect(
                flow.map(\.detail.type) == [
                    .commandReceived, .workoutStarted, .replySent,
                    .commandReceived, .workoutEnded, .replySent,
                    .commandReceived, .shareQueued, .replySent,
                    .commandReceived, .replySent,
                    .commandReceived, .replySent,
                    .deviceRemoved,
                ]
            )
            #expect(Set(received.map(\.detail.device)) == [wearable.devicePath])
            let sequence = received.map(\.sequence)
            #expect(zip(sequence, sequence.dropFirst()).allSatisfy { $0 + 1 == $1 }, "seq has no gaps: \(sequence)")
            #expect(zip(received, received.dropFirst()).allSatisfy { $0.time <= $1.time })

            guard flow.count == 14, case .commandReceived(_, let type, let id, let origin) = flow[0].detail else {
                return
            }
            #expect(type == .startWorkout && id == .integer(1) && origin == .device)
            guard case .commandReceived(_, nil, nil, .device) = flow[9].detail else {
                Issue.record("an undecodable line is received with no command type: \(flow[9])")
                return
            }
            guard case .replySent(_, let reply, .control) = flow[12].detail else {
                Issue.record("the sent command's reply comes from the control socket: \(flow[12])")
                return
            }
            #expect(reply.id == .integer(4))
            #expect(reply.outcome == .error(.noActiveWorkout))
        }
    }

    @Test func humanOutputIsATableWithAHeader() async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(.inProcess, devices: [wearable.devicePath]) { daemon in
            try daemon.waitUntilConnected(wearable.devicePath)
            let events = try Workoutctl.start(["--socket", daemon.socket, "events"])
            let header = try await offloaded { try events.readLine() }
            #expect(header.split(separator: " ") == ["SEQ", "TIME", "EVENT", "DEVICE", "DETAIL"])
            #expect(try wearable.request(CommandLines.start(id: 1, date: "2020-03-16T19:45:13Z")).contains("ok"))
            let lines = try await offloaded { try (0..<3).map { _ in try events.readLine() } }
            let eventColumn = try #require(header.range(of: "EVENT")).lowerBound.utf16Offset(in: header)
            let deviceColumn = try #require(header.range(of: "DEVICE")).lowerBound.utf16Offset(in: header)
            #expect(
                lines.map { String($0.dropFirst(eventColumn).prefix { $0 != " " }) } == [
                    "command_received", "workout_started", "reply_sent",
                ]
            )
            #expect(lines.allSatisfy { String($0.dropFirst(deviceColumn)).hasPrefix(wearable.devicePath) })
            #expect(lines[0].hasSuffix("start_workout id 1"))
            #expect(lines[2].contains("ok id 1 workout 1 started"))
            #expect(try await offloaded { try events.interrupt() } != 0, "Ctrl-C ends the stream")
        }
    }

    private func waitForSubscribers(_ count: Int, daemon: TestDaemon) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try daemon.status().eventSubscribers >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestingError("workoutctl events never connected")
    }
}

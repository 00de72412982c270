import ControlProtocol
import Foundation
import HTTPTypes
import NIOHTTP1
import OpenAPIRuntime
import Testing
import WebAPI
import WorkoutProtocol
import WorkoutdTesting

/// The HTTP API through its generated client against a real daemon (SQLite, pty wearables).
///
/// Every endpoint answers what `workoutctl` answers, pages do not overlap, filters filter, and the API is read-only.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebAPITests {
    @Test func everyEndpointAnswersWhatTheControlSocketAnswers() async throws {
        let wearable = try SimulatedWearable()
        let web = try WebDaemon(devices: [wearable.devicePath])
        #expect(try wearable.request(CommandLines.start(id: 1, location: "Pool")).contains(#""status":"ok""#))
        #expect(try wearable.request(CommandLines.end(id: 2)).contains(#""status":"ok""#))
        #expect(try wearable.request(CommandLines.share(id: 3)).contains(#""status":"ok""#))
        let client = try web.client()
        // The share's delivery settles first, so both answers below see the same totals.
        let deadline = ContinuousClock.now + .seconds(30)
        while try web.ctlJSON(["status"], as: StatusReport.self).first?.counters.sharesDelivered != 1,
            ContinuousClock.now < deadline
        {
            usleep(20_000)
        }

        let status = try await client.getStatus().ok.body.json
        #expect(status.counters.commands == 3)
        #expect(status.devicesConnected == 1)
        #expect(status.pendingRestart == [])
        let ctlStatus = try #require(try web.ctlJSON(["status"], as: StatusReport.self).first)
        #expect(status.pid == ctlStatus.pid)
        #expect(status.counters == ctlStatus.counters)

        let devices = try await client.getDevices().ok.body.json
        #expect(devices.devices.map(\.node) == [wearable.devicePath])
        #expect(devices.devices.first?.commands == 3)

        let page = try await client.getWorkouts().ok.body.json
        #expect(page.workouts.map(\.location) == ["Pool"])
        #expect(page.workouts.first?.durationSeconds != nil)
        #expect(page.next == nil)
        #expect(page.workouts == (try web.ctlJSON(["workouts"], as: WorkoutRecord.self)))

        let shares = try await client.getShares().ok.body.json
        #expect(shares.shares.count == 1)
        #expect(shares.shares.first?.service == .twitter)

        let metrics = try await String(collecting: try client.getMetrics().ok.body.plainText, upTo: 1 << 20)
        #expect(metrics.contains(#"workoutd_commands_total{type="start_workout",outcome="ok"} 1"#))
        // The same text `workoutctl metrics` prints (its counters have not moved in between).
        let ctlMetrics = try Workoutctl.run(["--socket", web.socket, "metrics"]).stdout
        #expect(ctlMetrics.contains(#"workoutd_commands_total{type="start_workout",outcome="ok"} 1"#))
    }

    @Test func workoutsArePagedNewestFirstAndFiltered() async throws {
        let first = try SimulatedWearable()
        let second = try SimulatedWearable()
        let web = try WebDaemon(devices: [first.devicePath, second.devicePath])
        for n in 0..<13 {
            for wearable in [first, second] {
                _ = try wearable.request(CommandLines.start(id: .init(2 * n), location: "Gym \(n)"))
                _ = try wearable.request(CommandLines.end(id: .init(2 * n + 1)))
            }
        }
        let client = try web.client()
        var ids: [Int64] = []
        var before: Int64?
        var pages = 0
        repeat {
            let page = try await client.getWorkouts(query: .init(before: before, limit: 10)).ok.body.json
            #expect(page.workouts.count == (pages < 2 ? 10 : 6))
            ids += page.workouts.map(\.id)
            before = page.next
            pages += 1
        } while before != nil && pages < 10
        #expect(pages == 3)
        #expect(ids == ids.sorted(by: >))
        #expect(Set(ids).count == 26)

        // `device` picks every device whose node contains it, so /dev/pts/1 would pick /dev/pts/12 too: the filter
        // names the wearable whose node is not part of the other's.
        let picked = second.devicePath.contains(first.devicePath) ? second : first
        let devices = try await client.getDevices().ok.body.json.devices
        let pickedIdentity = try #require(devices.first { $0.node == picked.devicePath }?.identity)
        let mine = try await client.getWorkouts(query: .init(device: picked.devicePath, limit: 100)).ok.body.json
            .workouts
        #expect(mine.count == 13)
        #expect(mine.allSatisfy { $0.device.rawValue == pickedIdentity })

        let all = try await client.getWorkouts(query: .init(limit: 100)).ok.body.json.workouts
        let middle = all[13].startedAt
        let since = try await client.getWorkouts(query: .init(since: middle, limit: 100)).ok.body.json.workouts
        #expect(since.allSatisfy { $0.startedAt >= middle.addingTimeInterval(-1) })
        #expect(
            try await client.getWorkouts(query: .init(since: Date().addingTimeInterval(3600))).ok.body.json.workouts
                .isEmpty
        )
        #expect(
            try await client.getWorkouts(query: .init(until: Date().addingTimeInterval(-3600))).ok.body.json.workouts
                .isEmpty
        )

        let tooMany = try await client.getWorkouts(query: .init(limit: 5000))
        #expect(try tooMany.badRequest.body.json.error.code == "bad_request")
    }

    @Test func theAPIIsReadOnlyAndEveryResponseCarriesTheSecurityHeaders() async throws {
        let web = try WebDaemon()
        for (method, path) in [
            (HTTPMethod.POST, "/api/status"), (.PUT, "/api/workouts"), (.DELETE, "/api/shares"), (.PATCH, "/"),
        ] {
            let reply = try await RawHTTP.send(method, web.baseURL + path, body: "{}")
            #expect(reply.status == 405, "\(method) \(path)")
            #expect(reply.header("Allow") == "GET, HEAD")
        }
        for path in ["/", "/api/status", "/metrics", "/assets/app.js", "/nowhere"] {
            let reply = try await RawHTTP.send(.GET, web.baseURL + path)
            #expect(reply.header("Content-Security-Policy")?.contains("default-src 'self'") == true, "\(path)")
            #expect(reply.header("Content-Security-Policy")?.contains("unsafe-inline") == false, "\(path)")
            #expect(reply.header("X-Content-Type-Options") == "nosniff", "\(path)")
            #expect(reply.header("X-Frame-Options") == "DENY", "\(path)")
            // Not no-referrer: the page's own login form must carry its Origin (no referrer leaves the hub).
            #expect(reply.header("Referrer-Policy") == "same-origin", "\(path)")
        }
        let page = try await RawHTTP.send(.GET, web.baseURL + "/")
        // No inline script or style: the CSP would refuse it, and the page must not need it.
        #expect(!page.body.contains("<script>"))
        #expect(!page.body.contains("style="))
        #expect(page.body.contains(#"<script src="/assets/app.js" defer></script>"#))
    }

    /// `/api/workouts` carries each workout's flags as `workoutctl workouts` shows them in FLAGS.
    @Test func workoutsCarryTheirFlags() async throws {
        let wearable = try SimulatedWearable()
        let web = try WebDaemon(devices: [wearable.devicePath])
        #expect(try wearable.request(CommandLines.start(id: 1)).contains(#""status":"ok""#))
        #expect(try wearable.request(CommandLines.end(id: 2)).contains(#""status":"ok""#))
        let raw = try await RawHTTP.send(.GET, web.baseURL + "/api/workouts")
        let object = try JSONSerialization.jsonObject(with: Data(raw.body.utf8)) as? [String: Any]
        let listed = try #require(object?["workouts"] as? [[String: Any]])
        let decoded = try await web.client().getWorkouts().ok.body.json.workouts
        #expect(listed.count == 1 && decoded.count == 1)
        let flags = try #require(listed.first?["flags"] as? [String], "\(raw.body)")
        #expect(flags == decoded.first?.flags.map(\.rawValue))
        // The clock mark the flags come from is there as well: the store's query attaches it.
        #expect((listed.first?["clockMark"] as? String) == decoded.first?.clockMark?.rawValue)
        #expect(flags.contains("clock-unsynchronized") == (decoded.first?.clockMark == .unsynchronized))
    }

    @Test func aHostileLocationIsShownAsText() async throws {
        let wearable = try SimulatedWearable()
        let web = try WebDaemon(devices: [wearable.devicePath])
        let hostile = #"<img src=x onerror=alert(1)>"#
        #expect(try wearable.request(CommandLines.start(id: 1, location: hostile)).contains(#""status":"ok""#))
        let page = try await RawHTTP.send(.GET, web.baseURL + "/")
        #expect(page.body.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(!page.body.contains("<img"))
        let workouts = try await web.client().getWorkouts().ok.body.json.workouts
        #expect(workouts.first?.location == hostile)
    }
}

import ControlProtocol
import Foundation
import Hummingbird
import Prometheus
import WorkoutProtocol

/// What the fleet page answers.
///
/// The page, its stylesheet, the login form, `/api/hubs`, `/api/workouts`, `/api/workouts.csv` and `/metrics`.
///
/// The same middleware as the hub page's, in the same order: security headers, read only, cross-site refusal, login.
struct FleetRoutes: Sendable {
    let configuration: WebConfiguration
    let database: FleetDatabase
    var timeZone: TimeZone = .current

    func router() -> Router<WebRequestContext> {
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: ReadOnlyMiddleware())
        router.add(middleware: CrossSiteMiddleware())
        let gate = LoginGate(configuration: configuration)
        router.add(middleware: LoginMiddleware(gate: gate, required: configuration.requiresLogin))

        router.get("/") { request, _ in await page(request) }
        router.get("/assets/style.css") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(string: PageStyle.source))
            )
        }
        router.get("/login") { _, _ in
            configuration.requiresLogin
                ? LoginGate.page(LoginPage.render(section: configuration.section, title: configuration.title))
                : Response(status: .seeOther, headers: [.location: "/"])
        }
        router.post("/login") { request, context in try await gate.login(request, client: context.client) }
        router.post("/logout") { request, _ in gate.logout(request) }
        router.get("/api/hubs") { request, _ in await hubs(request) }
        router.get("/api/workouts") { request, _ in await workouts(request) }
        router.get("/api/workouts.csv") { request, _ in await csv(request) }
        router.get("/metrics") { request, _ in await metrics(request) }
        return router
    }

    private static func parameters(_ request: Request) -> [(String, String)] {
        request.uri.queryParameters.map { (String($0.key), String($0.value)) }
    }

    private func today() -> Date { PageTime.calendar(timeZone: timeZone).startOfDay(for: Date()) }

    private func hubs(_ request: Request) async -> Response {
        if let refused = Self.noParameters(request) { return refused }
        do {
            return Self.json(try await database.hubs(dayStart: today()))
        } catch {
            return Self.unavailable(error)
        }
    }

    private func workouts(_ request: Request) async -> Response {
        let filter: FleetWorkoutFilter
        do {
            filter = try FleetWorkoutFilter.parse(Self.parameters(request), timeZone: timeZone)
        } catch {
            return WebErrors.response(.badRequest, code: "bad_request", error.message)
        }
        do {
            return Self.json(try await database.workouts(filter))
        } catch {
            return Self.unavailable(error)
        }
    }

    private func csv(_ request: Request) async -> Response {
        var filter: FleetWorkoutFilter
        do {
            filter = try FleetWorkoutFilter.parse(
                Self.parameters(request),
                maximumLimit: FleetWorkoutFilter.maximumCSVRows,
                defaultLimit: FleetWorkoutFilter.maximumCSVRows,
                timeZone: timeZone
            )
        } catch {
            return WebErrors.response(.badRequest, code: "bad_request", error.message)
        }
        filter.limit = min(filter.limit, FleetWorkoutFilter.maximumCSVRows)
        let workouts: [FleetWorkout]
        do {
            workouts = try await database.workouts(filter)
        } catch {
            return Self.unavailable(error)
        }
        let writer = WorkoutCSV(timeZone: timeZone)
        var text = WorkoutCSV.line(Self.csvHeader)
        for workout in workouts {
            text += WorkoutCSV.line([
                workout.hubID, String(workout.workoutID), workout.deviceID, workout.location,
                String(workout.intensityLevel), writer.time(workout.startedAt), workout.endedAt.map(writer.time) ?? "",
                workout.durationSeconds.map(WorkoutDuration.text) ?? "", writer.time(workout.date),
                workout.clockMark ?? "",
            ])
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: WorkoutCSV.contentType,
                .contentDisposition: #"attachment; filename="fleet-workouts.csv""#,
            ],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }

    static let csvHeader = [
        "hub_id", "workout_id", "device", "location", "intensity_level", "started_at", "ended_at",
        "duration_seconds", "wearable_date", "clock_mark",
    ]

    private func metrics(_ request: Request) async -> Response {
        if let refused = Self.noParameters(request) { return refused }
        let hubs: [FleetHub]
        do {
            hubs = try await database.hubs(dayStart: today())
        } catch {
            return Self.unavailable(error)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: Self.metricsText(hubs)))
        )
    }

    /// The fleet in Prometheus' text format: totals, and each hub's state labelled with its id.
    static func metricsText(_ hubs: [FleetHub]) -> String {
        let registry = PrometheusCollectorRegistry()
        // The unit is part of each name already (`_seconds`), so none is appended.
        func gauge(_ name: String, _ help: String, labels: [(String, String)] = []) -> Gauge {
            registry.makeGauge(
                descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help),
                labels: labels
            )
        }
        func sum(_ value: (FleetHub) -> Int?) -> Int64 { Int64(hubs.reduce(0) { $0 + (value($1) ?? 0) }) }
        gauge("workoutd_fleet_hubs", "Hubs in the central database.").set(Int64(hubs.count))
        gauge("workoutd_fleet_hubs_online", "Hubs seen within 3 heartbeat intervals.")
            .set(Int64(hubs.filter(\.online).count))
        gauge("workoutd_fleet_backlog", "Rows not yet shipped, summed over the hubs' last heartbeats.")
            .set(sum(\.backlog))
        gauge("workoutd_fleet_wearables_connected", "Wearables connected, summed over the hubs' last heartbeats.")
            .set(sum(\.wearablesConnected))
        gauge("workoutd_fleet_active_workouts", "Workouts running, summed over the hubs' last heartbeats.")
            .set(sum(\.activeWorkouts))
        gauge("workoutd_fleet_workouts_today", "Workouts started today, over all hubs.").set(sum { $0.workoutsToday })
        for hub in hubs {
            let labels = [("hub_id", hub.hubID)]
            gauge("workoutd_fleet_hub_online", "1 while the hub is online.", labels: labels)
                .set(Int64(hub.online ? 1 : 0))
            gauge("workoutd_fleet_hub_backlog", "The hub's backlog.", labels: labels).set(Int64(hub.backlog ?? 0))
            if let lastSeen = hub.lastSeen {
                gauge(
                    "workoutd_fleet_hub_last_seen_seconds",
                    "The hub's last heartbeat, in seconds since the epoch.",
                    labels: labels
                ).set(lastSeen.timeIntervalSince1970)
            }
        }
        return registry.emitToString()
    }

    private func page(_ request: Request) async -> Response {
        let filter: FleetWorkoutFilter
        do {
            filter = try FleetWorkoutFilter.parse(Self.parameters(request), timeZone: timeZone)
        } catch {
            return LoginGate.page(
                FleetPage.problemPage(error.message, configuration: configuration),
                status: .badRequest
            )
        }
        do {
            let hubs = try await database.hubs(dayStart: today())
            let workouts = try await database.workouts(filter)
            return LoginGate.page(
                FleetPage(
                    hubs: hubs,
                    workouts: workouts,
                    filter: filter,
                    now: Date(),
                    requiresLogin: configuration.requiresLogin,
                    title: configuration.title,
                    timeZone: timeZone
                ).render()
            )
        } catch {
            return LoginGate.page(
                FleetPage.problemPage(error.message, configuration: configuration),
                status: .serviceUnavailable
            )
        }
    }

    /// `/api/hubs` and `/metrics` take no parameters; one given is a mistake worth saying.
    private static func noParameters(_ request: Request) -> Response? {
        guard let (name, _) = parameters(request).first else { return nil }
        return WebErrors.response(
            .badRequest,
            code: "bad_request",
            "Unknown query parameter '\(UntrustedText.escaped(String(name.prefix(64))))'; this path takes none."
        )
    }

    private static func unavailable(_ error: FleetDatabaseError) -> Response {
        WebErrors.response(.serviceUnavailable, code: "unavailable", error.message)
    }

    private static func json(_ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else {
            return WebErrors.response(.internalServerError, code: "unavailable", "The answer could not be encoded.")
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}

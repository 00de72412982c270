import ControlPlane
import ControlProtocol
import Foundation
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime
import WebAPI
import WorkoutEngine
import WorkoutProtocol

/// What the server answers: the page and its two files, the login form, and the API.
///
/// The API's routes are registered by the stubs generated from `Sources/WebAPI/openapi.yaml`.
struct WebRoutes {
    let configuration: WebConfiguration
    let responder: ControlResponder
    let streams: EventStreams

    func router() throws -> Router<WebRequestContext> {
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: ReadOnlyMiddleware())
        router.add(middleware: CrossSiteMiddleware())
        let gate = LoginGate(configuration: configuration, endSessions: { streams.end(sessions: $0) })
        router.add(middleware: LoginMiddleware(gate: gate, required: configuration.requiresLogin))
        router.add(middleware: MalformedRequestMiddleware())

        router.get("/") { _, _ in try await page() }
        router.get("/assets/app.js") { _, _ in asset(PageScript.source, type: "text/javascript; charset=utf-8") }
        router.get("/assets/style.css") { _, _ in asset(PageStyle.source, type: "text/css; charset=utf-8") }
        router.get("/login") { _, _ in
            configuration.requiresLogin
                ? LoginGate.page(LoginPage.render(section: configuration.section, title: configuration.title))
                : Response(status: .seeOther, headers: [.location: "/"])
        }
        router.post("/login") { request, context in try await gate.login(request, client: context.client) }
        router.post("/logout") { request, _ in gate.logout(request) }

        let api = WebAPIHandler(responder: responder, streams: streams, configuration: configuration)
        // Dates as the control socket writes them (ISO 8601, whole seconds).
        try api.registerHandlers(on: router, configuration: .init(dateTranscoder: .iso8601))
        return router
    }

    private func page() async throws -> Response {
        let status: StatusReport
        do {
            status = try await responder.status()
        } catch {
            return WebErrors.response(.serviceUnavailable, code: error.code.rawValue, error.message)
        }
        let devices = await responder.devices()
        let active = (try? await responder.workouts(WorkoutQuery(activeOnly: true), matching: nil)) ?? []
        let recent = (try? await responder.workouts(WorkoutQuery(limit: 20), matching: nil)) ?? []
        let shares = (try? await responder.shares(limit: 20).shares) ?? []
        let now = Date()
        let calendar = PageTime.calendar()
        var today = 0
        var week = 0
        if let weekStart = calendar.dateInterval(of: .weekOfYear, for: now)?.start {
            let dayStart = calendar.startOfDay(for: now)
            let since = min(weekStart, dayStart)
            let started = (try? await responder.workouts(WorkoutQuery(startedFrom: since), matching: nil)) ?? []
            today = started.filter { $0.startedAt >= dayStart }.count
            week = started.filter { $0.startedAt >= weekStart }.count
        }
        let html = StatusPage(
            status: status,
            devices: devices,
            activeWorkouts: active,
            recentWorkouts: recent,
            shares: shares,
            workoutsToday: today,
            workoutsThisWeek: week,
            now: now,
            requiresLogin: configuration.requiresLogin
        ).render()
        return LoginGate.page(html)
    }

    private func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(string: text))
        )
    }
}

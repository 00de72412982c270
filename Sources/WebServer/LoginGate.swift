import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Logins on an address other than loopback.
///
/// The token form, session cookies, bearer tokens and the throttle every token goes through.
final class LoginGate: Sendable {
    static let cookieName = "workoutd_session"

    /// What a request's credentials come to.
    enum Admission: Equatable {
        /// A live session cookie.
        case session(WebSessions.Admission)
        /// The token as `Authorization: Bearer`.
        case bearer
        /// No credentials, or a session that is not (or no longer) valid.
        case none
        /// A wrong bearer token (counted by the throttle).
        case wrong
        /// Too many wrong tokens: not judged.
        case throttled(retryAfter: Duration)
    }

    private let token: WebToken?
    private let sessions: WebSessions
    private let throttle: Mutex<LoginThrottle>
    /// Ends the event streams of sessions that end (logged out, or dropped for a newer one).
    private let endSessions: @Sendable ([String]) -> Void
    private let section: String
    private let title: String
    /// Cookies get `Secure` under TLS, so a browser never sends them in clear.
    private let secureCookies: Bool

    init(configuration: WebConfiguration, endSessions: @escaping @Sendable ([String]) -> Void = { _ in }) {
        token = configuration.token
        sessions = WebSessions(lifetime: configuration.sessionLifetime, capacity: configuration.maximumSessions)
        throttle = Mutex(
            LoginThrottle(
                attempts: configuration.loginAttempts,
                lockout: configuration.loginLockout,
                globalAttempts: configuration.globalLoginAttempts
            )
        )
        self.endSessions = endSessions
        section = configuration.section
        title = configuration.title
        secureCookies = configuration.tls != nil
    }

    /// What `request` (from `client`) carries.
    ///
    /// A live session cookie, or a bearer token judged by the throttle.
    func admission(_ request: Request, client: ClientAddress) -> Admission {
        if let session = request.cookies[Self.cookieName]?.value, let admission = sessions.admission(session) {
            return .session(admission)
        }
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
            return .none
        }
        let correct = token?.matches(authorization.utf8.dropFirst("Bearer ".utf8.count)) ?? false
        switch throttle.withLock({ $0.judge(client, correct: correct, now: .now) }) {
        case .admitted: return .bearer
        case .wrong: return .wrong
        case .refused(let retryAfter): return .throttled(retryAfter: retryAfter)
        }
    }

    /// `POST /login`.
    ///
    /// The form's token, answered with a session cookie, the form again, or 429 while throttled.
    func login(_ request: Request, client: ClientAddress) async throws -> Response {
        // A login form is a few hundred bytes; anything larger is not one. The whole body is read before the
        // token is judged, and the judgement and its count are one step, so parallel guesses count one by one.
        let body = try await request.body.collect(upTo: 4096)
        let submitted = Self.formValue("token", in: String(buffer: body))
        let correct = submitted.map { token?.matches(Array($0.utf8)) ?? false } ?? false
        switch throttle.withLock({ $0.judge(client, correct: correct, now: .now) }) {
        case .refused(let retryAfter):
            var response = Self.page(
                LoginPage.render(problem: "Too many failed logins; try again later.", section: section, title: title),
                status: .tooManyRequests
            )
            response.headers[.retryAfter] = Self.seconds(retryAfter)
            return response
        case .wrong:
            return Self.page(
                LoginPage.render(problem: "Wrong token.", section: section, title: title),
                status: .unauthorized
            )
        case .admitted:
            let session = sessions.create()
            endSessions(session.evicted)
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.headers[.setCookie] = cookie(session.id, maxAge: sessions.lifetimeSeconds)
            return response
        }
    }

    /// `POST /logout`: ends the session and its event streams, and forgets the cookie.
    func logout(_ request: Request) -> Response {
        if let session = request.cookies[Self.cookieName]?.value, let admission = sessions.admission(session) {
            sessions.end(admission.id)
            endSessions([admission.id])
        }
        var response = Response(status: .seeOther, headers: [.location: "/login"])
        response.headers[.setCookie] = cookie("", maxAge: 0)
        return response
    }

    private func cookie(_ value: String, maxAge: Int) -> String {
        "\(Self.cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (secureCookies ? "; Secure" : "")
    }

    /// Whole seconds to wait, at least 1 (`Retry-After`).
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(max(1, seconds + (attoseconds > 0 ? 1 : 0)))"
    }

    static func page(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html))
        )
    }

    /// One field of an `application/x-www-form-urlencoded` body.
    static func formValue(_ name: String, in form: String) -> String? {
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }
}

/// Lets a request through when no login is needed (loopback), or it is logged in.
///
/// Otherwise the API answers 401 (429 while its address guesses too much) and the page sends the browser to the login
/// form. The form and the files it loads are always reachable.
struct LoginMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext
    static let publicPaths: Set<String> = ["/login", "/assets/style.css", "/assets/app.js"]

    let gate: LoginGate
    let required: Bool

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard required, !Self.publicPaths.contains(path) else { return try await next(request, context) }
        switch gate.admission(request, client: context.client) {
        case .session(let session):
            return try await RequestScope.$session.withValue(session) { try await next(request, context) }
        case .bearer:
            return try await next(request, context)
        case .throttled(let retryAfter):
            var response = WebErrors.response(
                .tooManyRequests,
                code: "too_many_requests",
                "Too many wrong tokens; try again later."
            )
            response.headers[.retryAfter] = LoginGate.seconds(retryAfter)
            return response
        case .none, .wrong:
            break
        }
        if path.hasPrefix("/api/") || path == "/metrics" {
            var response = WebErrors.response(
                .unauthorized,
                code: "unauthorized",
                "Log in first: a session cookie (POST /login) or Authorization: Bearer <token>."
            )
            response.headers[.wwwAuthenticate] = #"Bearer realm="workoutd""#
            return response
        }
        return Response(status: .seeOther, headers: [.location: "/login"])
    }
}

/// The read-only rule: GET and HEAD everywhere, POST only to log in and out; anything else is 405.
struct ReadOnlyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let method = request.method
        let path = request.uri.path
        if method == .get || method == .head || (method == .post && (path == "/login" || path == "/logout")) {
            return try await next(request, context)
        }
        var response = WebErrors.response(
            .methodNotAllowed,
            code: "method_not_allowed",
            "This API is read-only: use GET."
        )
        response.headers[.allow] = path == "/login" || path == "/logout" ? "GET, HEAD, POST" : "GET, HEAD"
        return response
    }
}

/// Error bodies in the API's shape: `{"error":{"code":"…","message":"…"}}`.
enum WebErrors {
    static func response(_ status: HTTPResponse.Status, code: String, _ message: String) -> Response {
        struct Body: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
            }
            var error: Detail
        }
        let json =
            (try? JSONEncoder().encode(Body(error: .init(code: code, message: message))))
            ?? Data(#"{"error":{"code":"unavailable","message":""}}"#.utf8)
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: json))
        )
    }
}

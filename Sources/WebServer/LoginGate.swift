import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Logins on an address other than loopback.
///
/// The token form, session cookies and the failed-login throttle.
final class LoginGate: Sendable {
    static let cookieName = "workoutd_session"

    private let token: WebToken?
    private let sessions: WebSessions
    private let throttle: Mutex<LoginThrottle>
    /// Cookies get `Secure` under TLS, so a browser never sends them in clear.
    private let secureCookies: Bool

    init(configuration: WebConfiguration) {
        token = configuration.token
        sessions = WebSessions(lifetime: configuration.sessionLifetime, capacity: configuration.maximumSessions)
        throttle = Mutex(LoginThrottle(attempts: configuration.loginAttempts, lockout: configuration.loginLockout))
        secureCookies = configuration.tls != nil
    }

    /// Whether `request` carries a live session cookie or the token as a bearer credential.
    func admits(_ request: Request) -> Bool {
        if let session = request.cookies[Self.cookieName]?.value, sessions.isValid(session) { return true }
        if let token, let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") {
            return token.matches(authorization.utf8.dropFirst("Bearer ".utf8.count))
        }
        return false
    }

    /// `POST /login`: the form's token, answered with a session cookie or the form again.
    ///
    /// While the address is throttled, the answer is 429.
    func login(_ request: Request, client: String) async throws -> Response {
        if case .refused(let retryAfter) = throttle.withLock({ $0.check(client, now: .now) }) {
            var response = Self.page(
                LoginPage.render(problem: "Too many failed logins; try again later."),
                status: .tooManyRequests
            )
            response.headers[.retryAfter] = "\(max(1, retryAfter.components.seconds))"
            return response
        }
        // A login form is a few hundred bytes; anything larger is not one.
        let body = try await request.body.collect(upTo: 4096)
        let form = String(buffer: body)
        let submitted = Self.formValue("token", in: form)
        guard let token, let submitted, token.matches(Array(submitted.utf8)) else {
            throttle.withLock { $0.recordFailure(client, now: .now) }
            return Self.page(LoginPage.render(problem: "Wrong token."), status: .unauthorized)
        }
        throttle.withLock { $0.recordSuccess(client) }
        let session = sessions.create()
        var response = Response(status: .seeOther, headers: [.location: "/"])
        response.headers[.setCookie] = cookie(session, maxAge: sessions.lifetimeSeconds)
        return response
    }

    /// `POST /logout`: ends the session and forgets the cookie.
    func logout(_ request: Request) -> Response {
        if let session = request.cookies[Self.cookieName]?.value { sessions.end(session) }
        var response = Response(status: .seeOther, headers: [.location: "/login"])
        response.headers[.setCookie] = cookie("", maxAge: 0)
        return response
    }

    private func cookie(_ value: String, maxAge: Int) -> String {
        "\(Self.cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (secureCookies ? "; Secure" : "")
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
/// Otherwise the API answers 401 and the page sends the browser to the login form. The form and its stylesheet are
/// always reachable.
struct LoginMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext
    let gate: LoginGate
    let required: Bool

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard required, path != "/login", path != "/assets/style.css", !gate.admits(request) else {
            return try await next(request, context)
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

import HTTPTypes
import Hummingbird

/// Whether a request was sent by a page of another site (a form posted from elsewhere).
///
/// By `Sec-Fetch-Site`, which browsers set on every request, or else by an `Origin` that is not the `Host` the request
/// names. A request with neither (curl, a script) is not a browser's and is judged by its credentials alone.
enum CrossSiteCheck {
    static func isCrossSite(_ request: Request) -> Bool {
        if let site = request.headers[.secFetchSite]?.lowercased() {
            return site != "same-origin" && site != "none"
        }
        guard let origin = request.headers[.origin] else { return false }
        guard let host = request.head.authority.flatMap(HostHeader.init) else { return true }
        return !sameAuthority(origin: origin, host: host)
    }

    /// Whether `origin` (`scheme://host[:port]`) names `host`, default ports filled in for both.
    static func sameAuthority(origin: String, host: HostHeader) -> Bool {
        let scheme: String
        let authority: Substring
        if origin.hasPrefix("http://") {
            scheme = "http"
            authority = origin.dropFirst("http://".count)
        } else if origin.hasPrefix("https://") {
            scheme = "https"
            authority = origin.dropFirst("https://".count)
        } else {
            return false
        }
        guard !authority.contains("/"), let named = HostHeader(String(authority)) else { return false }
        let defaultPort = scheme == "https" ? 443 : 80
        return named.name == host.name && (named.port ?? defaultPort) == (host.port ?? defaultPort)
    }
}

/// Refuses a `POST` (logging in or out, the only ones the server takes) that another site sent.
///
/// 403, before the login gate looks at it, so a page elsewhere can neither log a browser in with a token of its
/// choosing nor log it out.
struct CrossSiteMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method == .post, CrossSiteCheck.isCrossSite(request) else {
            return try await next(request, context)
        }
        return WebErrors.response(.forbidden, code: "cross_site", "Another site may not log in or out here.")
    }
}

extension HTTPField.Name {
    // Not among swift-http-types' names; the literals are valid field names, so these always exist.
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site") ?? .origin
}

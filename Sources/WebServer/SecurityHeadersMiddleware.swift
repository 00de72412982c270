import HTTPTypes
import Hummingbird

/// Sets the headers that make the page safe to open on every response, errors included.
///
/// A strict Content-Security-Policy (scripts and styles from this server's own files only: nothing inline, nothing
/// fetched elsewhere), no MIME sniffing, no framing, no referrer leaving the hub, nothing cached. The referrer policy
/// is `same-origin`, not `no-referrer`: under the latter a browser sends `Origin: null` with the page's own login form,
/// which could then not be told from another site's (``CrossSiteCheck``).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var contentSecurityPolicy: String {
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        Self.apply(to: &response.headers)
        return response
    }

    static func apply(to headers: inout HTTPFields) {
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        headers[.xContentTypeOptions] = "nosniff"
        headers[.xFrameOptions] = "DENY"
        headers[.referrerPolicy] = "same-origin"
        headers[.crossOriginOpenerPolicy] = "same-origin"
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
    }
}

extension HTTPField.Name {
    // Not among swift-http-types' names; the literals are valid field names, so these always exist.
    static let xFrameOptions = HTTPField.Name("X-Frame-Options") ?? .xContentTypeOptions
    static let referrerPolicy = HTTPField.Name("Referrer-Policy") ?? .xContentTypeOptions
    static let crossOriginOpenerPolicy = HTTPField.Name("Cross-Origin-Opener-Policy") ?? .xContentTypeOptions
}

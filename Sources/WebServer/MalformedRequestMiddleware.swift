import Foundation
import Hummingbird
import OpenAPIRuntime

/// A query parameter the API's generated code cannot read is answered 400, naming the parameter.
///
/// `limit=abc` or `since=yesterday` is the client's mistake, not the 500 the error would otherwise become. The
/// generated code's error does not say which parameter it was, so the query is read again here, by the kinds of value
/// `openapi.yaml` gives the API's parameters.
struct MalformedRequestMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    enum Kind {
        case integer, dateTime, boolean
    }

    /// The API's query parameters that are not plain strings, by name (`openapi.yaml`).
    static let kinds: [String: Kind] = [
        "limit": .integer, "before": .integer, "since": .dateTime, "until": .dateTime, "active": .boolean,
    ]

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ServerError where error.operationInput == nil {
            let query = request.uri.queryParameters.map { (String($0.key), String($0.value)) }
            let message =
                Self.malformed(in: query).map { name, value in
                    "The query parameter '\(name)' must be \(Self.expectation(name)); got '\(value)'."
                } ?? "The request is malformed: \(error.causeDescription)."
            return WebErrors.response(.badRequest, code: "bad_request", message)
        }
    }

    /// The first parameter of `query` whose value is not of its kind.
    static func malformed(in query: [(String, String)]) -> (String, String)? {
        query.first { name, value in
            switch kinds[name] {
            case .integer?: Int64(value) == nil
            case .dateTime?: (try? ISO8601DateTranscoder.iso8601.decode(value)) == nil
            case .boolean?: value != "true" && value != "false"
            case nil: false
            }
        }
    }

    private static func expectation(_ name: String) -> String {
        switch kinds[name] {
        case .integer?: "an integer"
        case .dateTime?: "a date and time in ISO 8601, e.g. 2026-11-28T07:00:00Z"
        case .boolean?: "true or false"
        case nil: "well formed"
        }
    }
}

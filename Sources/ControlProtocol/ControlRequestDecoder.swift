import Foundation

/// Turns one request line into a ``ControlRequest``, or the error to reply with and the id to echo.
///
/// Holds its own `JSONDecoder`; not thread-safe, so each connection owns one.
public struct ControlRequestDecoder {
    /// A line that is not a valid request.
    ///
    /// The reply's error, and the request's id when it had a usable one.
    public struct Failure: Error, Sendable {
        public var id: ControlRequestID?
        public var error: ControlError
    }

    private let decoder = ControlSocket.makeDecoder()

    public init() {}

    public func decode(_ bytes: some Collection<UInt8>) -> Result<ControlRequest, Failure> {
        let data = Data(bytes)
        let header: Header
        do {
            header = try decoder.decode(Header.self, from: data)
        } catch {
            return .failure(Failure(id: nil, error: ControlError(.parseError, "The request is not a JSON object.")))
        }
        guard let method = header.method else {
            return .failure(
                Failure(id: header.id, error: ControlError(.invalidRequest, "The request has no string 'method'."))
            )
        }
        guard ControlMethod(rawValue: method) != nil else {
            return .failure(
                Failure(
                    id: header.id,
                    error: ControlError(
                        .unknownMethod,
                        "Unknown method '\(method)'; expected one of \(ControlMethod.allCases.map(\.rawValue).joined(separator: ", "))."
                    )
                )
            )
        }
        do {
            return .success(try decoder.decode(ControlRequest.self, from: data))
        } catch {
            return .failure(Failure(id: header.id, error: ControlError(.invalidParams, Self.describe(error))))
        }
    }

    /// The fields every request has, read leniently so an error reply can still echo the id.
    private struct Header: Decodable {
        var id: ControlRequestID?
        var method: String?

        enum CodingKeys: String, CodingKey { case id, method }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try? container.decodeIfPresent(ControlRequestID.self, forKey: .id)
            method = try? container.decodeIfPresent(String.self, forKey: .method)
        }
    }

    private static func describe(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            ((codingPath + (key.map { [$0] } ?? [])).map(\.stringValue)).joined(separator: ".")
        }
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?:
            return "Missing '\(path(context.codingPath, key))'."
        case .typeMismatch(let type, let context)?:
            return "'\(path(context.codingPath))' must be of type \(type)."
        case .valueNotFound(_, let context)?:
            return "'\(path(context.codingPath))' must not be null."
        case .dataCorrupted(let context)?:
            return context.debugDescription
        default:
            return "The request could not be read: \(error)."
        }
    }
}

/// One reply line: `{"id":..,"result":..}` or `{"id":..,"error":{"code":..,"message":..}}`.
///
/// Generic over the result so the server encodes and the client decodes the same type; `id` is
/// `null` only when the request had no usable id.
public struct ControlResponse<Value: Codable & Sendable>: Sendable {
    public var id: ControlRequestID?
    public var outcome: Result<Value, ControlError>

    public init(id: ControlRequestID?, outcome: Result<Value, ControlError>) {
        self.id = id
        self.outcome = outcome
    }
}

extension ControlResponse: Codable {
    enum CodingKeys: String, CodingKey { case id, result, error }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(ControlRequestID.self, forKey: .id)
        if let error = try container.decodeIfPresent(ControlError.self, forKey: .error) {
            outcome = .failure(error)
        } else {
            outcome = .success(try container.decode(Value.self, forKey: .result))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // Always present, `null` included, so a client can tell "no id" from "not a reply".
        try container.encode(id, forKey: .id)
        switch outcome {
        case .success(let value): try container.encode(value, forKey: .result)
        case .failure(let error): try container.encode(error, forKey: .error)
        }
    }
}

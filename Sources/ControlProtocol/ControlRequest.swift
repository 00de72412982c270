import Foundation
import WorkoutProtocol

/// A request's `id`, echoed in its reply: a string or an integer, exactly as for wearable commands.
public typealias ControlRequestID = CommandID

/// What a control client asks for: one case per method, each with its own parameters.
public enum ControlCall: Hashable, Sendable {
    case status
    case devices
    /// `since` and `until` bound when they started, as the HTTP API's do.
    ///
    /// At or after `since`, before `until`.
    case workouts(device: String?, limit: Int?, since: Date? = nil, until: Date? = nil)
    case shares(limit: Int?)
    /// Runs `line` on the session of `device` as if that device had sent it. Without `create`, `device` must
    /// be connected; with it, a name no device has gets its own session.
    case send(device: String, line: String, create: Bool = false)
    case metrics
    /// Starts the event stream on this connection.
    case subscribe
    /// Names the device `device` (an identity or a node) `name`; a nil `name` forgets its name.
    case label(device: String, name: String?)

    /// The `method` string on the wire.
    public var method: ControlMethod {
        switch self {
        case .status: .status
        case .devices: .devices
        case .workouts: .workouts
        case .shares: .shares
        case .send: .send
        case .metrics: .metrics
        case .subscribe: .subscribe
        case .label: .label
        }
    }
}

/// The value of `method`.
public enum ControlMethod: String, Codable, Sendable, CaseIterable {
    case status, devices, workouts, shares, send, metrics, subscribe, label
}

/// One request line: `{"id":1,"method":"workouts","params":{"device":"A","limit":10}}`.
public struct ControlRequest: Hashable, Sendable {
    public var id: ControlRequestID?
    public var call: ControlCall

    public init(id: ControlRequestID?, call: ControlCall) {
        self.id = id
        self.call = call
    }
}

extension ControlRequest: Codable {
    enum CodingKeys: String, CodingKey { case id, method, params }
    enum ParameterKeys: String, CodingKey { case device, limit, line, create, name, since, until }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(ControlRequestID.self, forKey: .id)
        let method = try container.decode(ControlMethod.self, forKey: .method)
        // A method without parameters accepts a missing or empty `params`.
        var params: KeyedDecodingContainer<ParameterKeys>?
        if container.contains(.params), try !container.decodeNil(forKey: .params) {
            params = try container.nestedContainer(keyedBy: ParameterKeys.self, forKey: .params)
        }
        switch method {
        case .status: call = .status
        case .devices: call = .devices
        case .metrics: call = .metrics
        case .subscribe: call = .subscribe
        case .workouts:
            call = .workouts(
                device: try params?.decodeIfPresent(String.self, forKey: .device),
                limit: try Self.limit(in: params),
                since: try params?.decodeIfPresent(Date.self, forKey: .since),
                until: try params?.decodeIfPresent(Date.self, forKey: .until)
            )
        case .shares:
            call = .shares(limit: try Self.limit(in: params))
        case .send:
            let params = try Self.parameters(
                params,
                of: container,
                needing: "send needs params.device and params.line."
            )
            call = .send(
                device: try Self.device(in: params),
                line: try params.decode(String.self, forKey: .line),
                create: try params.decodeIfPresent(Bool.self, forKey: .create) ?? false
            )
        case .label:
            let params = try Self.parameters(params, of: container, needing: "label needs params.device.")
            call = .label(
                device: try Self.device(in: params),
                name: try params.decodeIfPresent(String.self, forKey: .name)
            )
        }
    }

    /// `params`, which the method needs: its absence is a missing key, said with `needing`.
    private static func parameters(
        _ params: KeyedDecodingContainer<ParameterKeys>?,
        of container: KeyedDecodingContainer<CodingKeys>,
        needing: String
    ) throws -> KeyedDecodingContainer<ParameterKeys> {
        guard let params else {
            throw DecodingError.keyNotFound(
                CodingKeys.params,
                .init(codingPath: container.codingPath, debugDescription: needing)
            )
        }
        return params
    }

    /// `params.device`, which must be there and not empty.
    private static func device(in params: KeyedDecodingContainer<ParameterKeys>) throws -> String {
        let device = try params.decode(String.self, forKey: .device)
        guard !device.isEmpty else {
            throw DecodingError.dataCorruptedError(
                forKey: .device,
                in: params,
                debugDescription: "params.device must not be empty."
            )
        }
        return device
    }

    private static func limit(in params: KeyedDecodingContainer<ParameterKeys>?) throws -> Int? {
        guard let params, let limit = try params.decodeIfPresent(Int.self, forKey: .limit) else { return nil }
        guard limit > 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .limit,
                in: params,
                debugDescription: "params.limit must be positive."
            )
        }
        return limit
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(id, forKey: .id)
        try container.encode(call.method, forKey: .method)
        switch call {
        case .status, .devices, .metrics, .subscribe:
            break
        case .workouts(let device, let limit, let since, let until):
            var params = container.nestedContainer(keyedBy: ParameterKeys.self, forKey: .params)
            try params.encodeIfPresent(device, forKey: .device)
            try params.encodeIfPresent(limit, forKey: .limit)
            try params.encodeIfPresent(since, forKey: .since)
            try params.encodeIfPresent(until, forKey: .until)
        case .shares(let limit):
            var params = container.nestedContainer(keyedBy: ParameterKeys.self, forKey: .params)
            try params.encodeIfPresent(limit, forKey: .limit)
        case .send(let device, let line, let create):
            var params = container.nestedContainer(keyedBy: ParameterKeys.self, forKey: .params)
            try params.encode(device, forKey: .device)
            try params.encode(line, forKey: .line)
            if create { try params.encode(create, forKey: .create) }
        case .label(let device, let name):
            var params = container.nestedContainer(keyedBy: ParameterKeys.self, forKey: .params)
            try params.encode(device, forKey: .device)
            try params.encodeIfPresent(name, forKey: .name)
        }
    }
}

/// Turns a value that arrives in a plain Codable shape (a string, say) into a typed value.
///
/// Used through ``Swift/KeyedDecodingContainer/decode(key:transformer:)`` so a type that is not
/// Codable itself, or whose wire form differs from its natural one, decodes in one line.
public protocol DecodingContainerTransformer: Sendable {
    associatedtype DecodingInput: Decodable
    associatedtype DecodingOutput
    /// `codingPath` names the value for an error message; it is built only if asked for.
    func decode(input: DecodingInput, codingPath: @autoclosure () -> [any CodingKey]) throws -> DecodingOutput
}

/// The encoding half of a transformer: the typed value back into its wire form.
public protocol EncodingContainerTransformer: Sendable {
    associatedtype EncodingInput
    associatedtype EncodingOutput: Encodable
    func encode(_ value: EncodingInput) throws -> EncodingOutput
}

/// A transformer that works both ways, so encoding stays symmetric with decoding.
public typealias CodingContainerTransformer = DecodingContainerTransformer & EncodingContainerTransformer

extension KeyedDecodingContainer {
    public func decode<T: DecodingContainerTransformer>(key: Key, transformer: T) throws -> T.DecodingOutput {
        try transformer.decode(input: decode(T.DecodingInput.self, forKey: key), codingPath: codingPath + [key])
    }

    public func decodeIfPresent<T: DecodingContainerTransformer>(key: Key, transformer: T) throws -> T.DecodingOutput? {
        try decodeIfPresent(T.DecodingInput.self, forKey: key).map {
            try transformer.decode(input: $0, codingPath: codingPath + [key])
        }
    }
}

extension KeyedEncodingContainer {
    public mutating func encode<T: EncodingContainerTransformer>(
        _ value: T.EncodingInput,
        forKey key: Key,
        transformer: T
    ) throws {
        try encode(transformer.encode(value), forKey: key)
    }

    public mutating func encodeIfPresent<T: EncodingContainerTransformer>(
        _ value: T.EncodingInput?,
        forKey key: Key,
        transformer: T
    ) throws {
        guard let value else { return }
        try encode(transformer.encode(value), forKey: key)
    }
}

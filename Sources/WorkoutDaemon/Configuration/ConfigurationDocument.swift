import Configuration
import Foundation
import Synchronization

/// A YAML configuration held in memory.
///
/// What a daemon assembled in a test process reads instead of a file.
///
/// Replacing its text and reloading is the in-memory counterpart of editing the file and sending SIGHUP.
public final class ConfigurationDocument: Sendable {
    private let storage: Mutex<String>

    public init(_ text: String) {
        storage = Mutex(text)
    }

    /// The document as it reads now.
    public var text: String {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// A configuration provider over one YAML text, parsed as the file provider parses a file.
struct YAMLDocumentProvider: ConfigProvider {
    private let document: YAMLSnapshot

    init(text: String, name: String) throws {
        let data = Data(text.utf8)
        document = try YAMLSnapshot(
            data: data.bytes,
            providerName: "YAMLDocumentProvider[\(name)]",
            parsingOptions: .default
        )
    }

    var providerName: String { document.providerName }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try document.value(forKey: key, type: type)
    }

    func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    nonisolated(nonsending) func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (
                _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
            ) async throws -> Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot {
        document
    }

    nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws ->
            Return
    ) async throws -> Return {
        try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }
}

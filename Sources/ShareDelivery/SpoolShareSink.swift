import Foundation

/// Writes each share as one JSON file, `<outbox>/<service>/share-<id>.json`: the default sink, works offline.
///
/// Atomic: the file is written under a temporary name, fsynced, renamed into place and the directory
/// fsynced, so a reader (or a crash) never sees half a file. Delivering a share again rewrites the same name.
public struct SpoolShareSink: ShareSink {
    /// `<state-dir>/outbox`.
    public let outbox: URL

    public init(outbox: URL) {
        self.outbox = outbox
    }

    /// The spool of a state directory: `<state-dir>/outbox`.
    public init(stateDirectory: String) {
        self.init(outbox: URL(fileURLWithPath: stateDirectory).appendingPathComponent("outbox"))
    }

    public func fileURL(for payload: SharePayload) -> URL {
        outbox.appendingPathComponent(payload.share.service.rawValue)
            .appendingPathComponent("share-\(payload.shareID).json")
    }

    public func deliver(_ payload: SharePayload) async throws {
        var bytes = try payload.json()
        bytes.append(UInt8(ascii: "\n"))
        let destination = fileURL(for: payload)
        let data = bytes
        // Blocking file I/O and fsync: on the background I/O thread, off the cooperative pool.
        try await BackgroundIO.run { try AtomicFile.write(data, to: destination) }
    }
}

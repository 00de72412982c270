import Foundation

/// Writes each share as one JSON file, `<outbox>/<service>/share-<id>.json`.
///
/// The default sink, works offline.
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
        self.init(
            outbox: URL(fileURLWithPath: stateDirectory, isDirectory: true)
                .appendingPathComponent("outbox", isDirectory: true)
        )
    }

    /// Where a share's file goes, built without asking the file system.
    ///
    /// A path component appended without saying whether it is a directory costs a stat of it.
    public func fileURL(for payload: SharePayload) -> URL {
        outbox.appendingPathComponent(payload.share.service.rawValue, isDirectory: true)
            .appendingPathComponent("share-\(payload.shareID).json", isDirectory: false)
    }

    public func deliver(_ payload: SharePayload) async throws {
        try await deliver([payload])[0].get()
    }

    public func deliver(_ payloads: [SharePayload]) async -> [Result<Void, any Error>] {
        let files = payloads.map { payload in
            Result { () throws -> AtomicFile.Replacement in
                var bytes = try payload.json()
                bytes.append(UInt8(ascii: "\n"))
                return AtomicFile.Replacement(data: bytes, destination: fileURL(for: payload))
            }
        }
        let ready = files.compactMap { try? $0.get() }
        // Blocking file I/O and fsync: on the background I/O thread, off the cooperative pool.
        let written: [Result<Void, any Error>]
        do {
            written = try await BackgroundIO.run { AtomicFile.write(ready) }
        } catch {
            written = Array(repeating: .failure(error), count: ready.count)
        }
        var outcomes = written.makeIterator()
        return files.map { file in
            switch file {
            case .failure(let error): .failure(error)
            case .success: outcomes.next() ?? .failure(ShareDeliveryError("the spool write was not attempted"))
            }
        }
    }
}

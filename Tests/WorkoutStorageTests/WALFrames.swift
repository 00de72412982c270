import Foundation

/// The commits in a SQLite write-ahead log, read from its frame headers: the pages each one wrote.
///
/// In order; the format is sqlite.org/fileformat2.html, "WAL file format". Counting them is how a test pins what a
/// command costs the disk (one frame per changed page, each `page size + 24` bytes, all synced before the ack).
struct WALFrames {
    /// The page numbers each commit wrote, oldest commit first.
    var commits: [[UInt32]] = []
    /// The database's size in pages after each commit (from its commit frame).
    var sizes: [UInt32] = []
    var pageSize = 0

    /// Reads `path` (`<database>-wal`).
    ///
    /// Frames after the last commit frame, and those left from before the log was restarted (their salts differ from
    /// the header's), are not part of any commit and are skipped.
    init(path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count >= 32 else { return }
        func word(_ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        pageSize = Int(word(8))
        let salts = (word(16), word(20))
        var pending: [UInt32] = []
        var offset = 32
        while offset + 24 + pageSize <= bytes.count, word(offset + 8) == salts.0, word(offset + 12) == salts.1 {
            pending.append(word(offset))
            if word(offset + 4) != 0 {  // a commit frame: its header holds the database size after the commit
                commits.append(pending)
                sizes.append(word(offset + 4))
                pending = []
            }
            offset += 24 + pageSize
        }
    }
}

import Foundation
import Testing
import WorkoutdTesting

/// Every committed fuzzing seed must pass the fuzzer's invariants on each test run, without libFuzzer.
///
/// So must every finding added to `Fuzz/corpus` as a regression.
@Suite("Fuzzing seed corpus")
struct SeedCorpusTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus")

    static func seeds() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    @Test("the corpus holds the committed seeds")
    func corpusIsPopulated() {
        #expect(Self.seeds().count >= 10, "seeds found in \(Self.folder.path): \(Self.seeds())")
    }

    @Test("seed keeps every stream invariant", arguments: seeds())
    func seedKeepsInvariants(name: String) throws {
        let stream = try Data(contentsOf: Self.folder.appendingPathComponent(name))
        // Throws, failing the test, with the invariant that broke.
        _ = try StreamCheck.check(Array(stream))
    }
}

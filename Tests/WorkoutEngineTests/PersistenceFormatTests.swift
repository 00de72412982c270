import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol

@Suite("Persisted forms")
struct PersistenceFormatTests {
    let workout = WorkoutRecord(
        id: 3,
        device: "watch",
        workout: Workout(location: "Gym", date: Date(timeIntervalSince1970: 1_584_387_913), intensityLevel: 4),
        startedAt: Date(timeIntervalSince1970: 1_700_000_000),
        startCommandID: .string("s1")
    )

    @Test("session state is keyed by its case name and round-trips")
    func sessionStateCoding() throws {
        for state in [SessionState.idle, .active(workout)] {
            let data = try JSONEncoder().encode(state)
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object.keys.count == 1)
            #expect(object.keys.first == (state == .idle ? "idle" : "active"))
            #expect(try JSONDecoder().decode(SessionState.self, from: data) == state)
        }
    }

    @Test("a state with no known case is rejected, not guessed")
    func unknownState() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SessionState.self, from: Data(#"{"paused":true}"#.utf8))
        }
    }

    @Test("remembered replies keep the most recent 1024 ids")
    func recentRepliesWindow() {
        var recent = RecentReplies()
        for i in 0..<3000 { recent.remember(.error(.nothingToShare, id: .integer(Int64(i))), for: .integer(Int64(i))) }
        #expect(recent.count == 1024)
        #expect(recent[.integer(1975)] == nil)
        #expect(recent[.integer(1976)] != nil && recent[.integer(2999)] != nil)
        #expect(recent.entries.first?.0 == .integer(1976))
        #expect(recent.entries.map(\.0) == (1976..<3000).map { CommandID.integer(Int64($0)) })
        // The same window built in one go equals the one that wrapped around.
        #expect(RecentReplies(recent.entries) == recent)
    }

    @Test("a remembered id keeps its place when its reply is remembered again")
    func recentRepliesUpdateInPlace() {
        var recent = RecentReplies(capacity: 3)
        for i in 1...3 { recent.remember(.error(.nothingToShare, id: .integer(Int64(i))), for: .integer(Int64(i))) }
        recent.remember(.error(.noActiveWorkout, id: .integer(1)), for: .integer(1))
        #expect(recent.entries.map(\.0) == [.integer(1), .integer(2), .integer(3)])
        #expect(recent[.integer(1)]?.errorCode == .noActiveWorkout)
        recent.remember(.error(.nothingToShare, id: .string("4")), for: .string("4"))
        #expect(recent.entries.map(\.0) == [.integer(2), .integer(3), .string("4")])
        #expect(recent[.integer(1)] == nil)
    }

    @Test("an evicted id is forgotten, also across many wraps of the window, and can be remembered again")
    func recentRepliesEvictionAcrossWraps() {
        var recent = RecentReplies(capacity: 3)
        for i in 0..<40 {
            recent.remember(.error(.nothingToShare, id: .integer(Int64(i))), for: .integer(Int64(i)))
            // Every id older than the window is unknown at every step, whatever the index keeps internally.
            for old in 0..<max(0, i - 2) { #expect(recent[.integer(Int64(old))] == nil) }
        }
        #expect(recent.entries.map(\.0) == [.integer(37), .integer(38), .integer(39)])
        recent.remember(.error(.noActiveWorkout, id: .integer(5)), for: .integer(5))
        #expect(recent[.integer(5)]?.errorCode == .noActiveWorkout)
        #expect(recent[.integer(37)] == nil)
        #expect(recent.entries.map(\.0) == [.integer(38), .integer(39), .integer(5)])
    }
}

import Testing

@testable import ShareDelivery

/// The decisions behind a quiet journal.
///
/// One line per distinct failure, a count when it changes or recovers.
@Suite struct RepeatedFailureFilterTests {
    @Test func identicalFailuresAreLoggedOnceAndCountedUntilRecovery() {
        var filter = RepeatedFailureFilter()
        #expect(filter.succeeded() == .routine)
        #expect(filter.failed("POST http://hub/ answered 503") == .logFailure(replacing: nil))
        for _ in 1...5 { #expect(filter.failed("POST http://hub/ answered 503") == .holdBack) }
        #expect(filter.succeeded() == .logRecovery(.init(description: "POST http://hub/ answered 503", count: 5)))
        #expect(filter.succeeded() == .routine)
        #expect(
            filter.failed("POST http://hub/ answered 503") == .logFailure(replacing: nil),
            "a new episode is logged again"
        )
    }

    @Test func aDifferentFailureIsLoggedWithTheCountOfTheOneItReplaces() {
        var filter = RepeatedFailureFilter()
        #expect(filter.failed("connection refused") == .logFailure(replacing: nil))
        #expect(filter.failed("connection refused") == .holdBack)
        #expect(filter.failed("connection refused") == .holdBack)
        #expect(
            filter.failed("answered 500") == .logFailure(replacing: .init(description: "connection refused", count: 2))
        )
        // Nothing held back of the second one: it replaces without a summary.
        #expect(filter.failed("timed out") == .logFailure(replacing: nil))
        #expect(filter.succeeded() == .logRecovery(.init(description: "timed out", count: 0)))
    }
}

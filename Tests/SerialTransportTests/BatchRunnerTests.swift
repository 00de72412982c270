import SerialTransport
import Synchronization
import Testing
import WorkoutProtocol

/// The batch runner's decisions, with no channel.
///
/// What runs when, when reading pauses and resumes, when a draining connection closes.
@Suite struct BatchRunnerTests {
    static func line(_ id: Int) -> DecodedLine {
        DecodedLine(id: .integer(Int64(id)), command: .success(.endWorkout))
    }

    static func ids(_ batch: BatchRunner.Batch?) -> [Int64]? {
        batch?.lines.map { line in if case .integer(let id) = line.id { id } else { -1 } }
    }

    static func ids(_ lines: [DecodedLine]) -> [Int64] {
        lines.map { line in if case .integer(let id) = line.id { id } else { -1 } }
    }

    /// Answers `batch` and writes whatever is ready, as the handler does.
    ///
    /// One reply per line, echoing its id. Returns the ids of the lines written, in order, and the runner's next
    /// actions.
    static func answer(
        _ batch: BatchRunner.Batch?,
        _ runner: inout BatchRunner,
        isWritable: Bool = true
    ) -> (written: [Int64], next: BatchRunner.Actions) {
        if let batch {
            runner.batchAnswered(batch.number, replies: batch.lines.map { .error(.noActiveWorkout, id: $0.id) })
        }
        var written: [Int64] = []
        while let ready = runner.nextAnswered() {
            #expect(ready.replies.map(\.id) == ready.lines.map(\.id), "each batch's own replies")
            written += ids(ready.lines)
        }
        return (written, runner.repliesWritten(isWritable: isWritable))
    }

    @Test func linesOfOneReadRunAsOneBatchAndTheNextStepsWhileItCommits() {
        var runner = BatchRunner()
        runner.linesArrived([Self.line(1)])
        runner.linesArrived([Self.line(2)])
        let first = runner.readComplete(isWritable: true)
        #expect(Self.ids(first.runBatch) == [1, 2])
        #expect(!first.close && !first.resumeReading)

        runner.linesArrived([Self.line(3)])
        let secondRead = runner.readComplete(isWritable: true)
        #expect(Self.ids(secondRead.runBatch) == [3], "the next read runs while the first batch commits")
        runner.linesArrived([Self.line(4)])
        let thirdRead = runner.readComplete(isWritable: true)
        #expect(thirdRead.runBatch == nil, "two batches in flight at most")
        #expect(runner.pendingLines == 1)
        let firstDone = Self.answer(first.runBatch, &runner)
        #expect(firstDone.written == [1, 2])
        #expect(Self.ids(firstDone.next.runBatch) == [4], "the waiting lines run next, as one batch")
        let secondDone = Self.answer(secondRead.runBatch, &runner)
        #expect(secondDone.written == [3] && secondDone.next.runBatch == nil)
        let last = Self.answer(firstDone.next.runBatch, &runner)
        #expect(last.written == [4] && last.next.runBatch == nil, "nothing left")
        #expect(runner.batchesInFlight == 0)
    }

    @Test func oneBatchAtATimeWhenSoConfigured() {
        var runner = BatchRunner(maximumBatchesInFlight: 1)
        runner.linesArrived([Self.line(1)])
        let first = runner.readComplete(isWritable: true)
        runner.linesArrived([Self.line(2)])
        #expect(runner.readComplete(isWritable: true).runBatch == nil)
        let done = Self.answer(first.runBatch, &runner)
        #expect(done.written == [1] && Self.ids(done.next.runBatch) == [2])
    }

    @Test func aBatchAnsweredBeforeTheOneAheadOfItWaitsForItsReplies() {
        var runner = BatchRunner()
        runner.linesArrived([Self.line(1)])
        let first = runner.readComplete(isWritable: true).runBatch
        runner.linesArrived([Self.line(2), Self.line(3)])
        let second = runner.readComplete(isWritable: true).runBatch
        let early = Self.answer(second, &runner)
        #expect(early.written.isEmpty, "held behind batch 1")
        #expect(early.next.runBatch == nil && runner.batchesInFlight == 2)
        runner.linesArrived([Self.line(4)])
        #expect(runner.readComplete(isWritable: true).runBatch == nil, "both still in flight until written")
        let both = Self.answer(first, &runner)
        #expect(both.written == [1, 2, 3], "in read order, each batch's replies once")
        #expect(Self.ids(both.next.runBatch) == [4])
    }

    @Test func readingPausesAtThePendingLimitAndResumesWhenTheBatchTakesTheLines() {
        var runner = BatchRunner(maximumPendingLines: 2, maximumBatchesInFlight: 1)
        runner.linesArrived([Self.line(1)])
        let first = runner.readComplete(isWritable: true).runBatch
        runner.linesArrived([Self.line(2)])
        let mayRead = runner.readRequested(isWritable: true)
        #expect(mayRead, "below the limit")
        runner.linesArrived([Self.line(3)])
        let mayReadMore = runner.readRequested(isWritable: true)
        #expect(!mayReadMore, "two lines wait behind the batch in flight")
        let finished = Self.answer(first, &runner)
        #expect(Self.ids(finished.next.runBatch) == [2, 3])
        #expect(finished.next.resumeReading, "the held read resumes once the waiting lines run")
        let last = Self.answer(finished.next.runBatch, &runner)
        #expect(!last.next.resumeReading, "resumed once only")
    }

    @Test func aLimitRaisedByAReloadReleasesAHeldRead() {
        var runner = BatchRunner(maximumPendingLines: 1, maximumBatchesInFlight: 1)
        runner.linesArrived([Self.line(1)])
        _ = runner.readComplete(isWritable: true)
        runner.linesArrived([Self.line(2)])
        let mayRead = runner.readRequested(isWritable: true)
        #expect(!mayRead)
        let raised = runner.pendingLimitChanged(10, isWritable: true)
        #expect(raised.resumeReading)
        #expect(runner.maximumPendingLines == 10)
    }

    @Test func nothingRunsAndNothingIsReadWhileTheDeviceTakesNoReplies() {
        var runner = BatchRunner()
        runner.linesArrived([Self.line(1)])
        let read = runner.readComplete(isWritable: false)
        #expect(read.runBatch == nil)
        let mayRead = runner.readRequested(isWritable: false)
        #expect(!mayRead)
        let writable = runner.writabilityChanged(isWritable: true)
        #expect(Self.ids(writable.runBatch) == [1])
        #expect(writable.resumeReading)
    }

    @Test func aFinishedBatchWhoseRepliesFilledTheDeviceHoldsTheNextOne() {
        var runner = BatchRunner(maximumBatchesInFlight: 1)
        runner.linesArrived([Self.line(1)])
        let first = runner.readComplete(isWritable: true).runBatch
        runner.linesArrived([Self.line(2)])
        _ = runner.readComplete(isWritable: true)
        let finished = Self.answer(first, &runner, isWritable: false)
        #expect(finished.next.runBatch == nil, "the replies just written filled the device")
        let writable = runner.writabilityChanged(isWritable: true)
        #expect(Self.ids(writable.runBatch) == [2])
    }

    @Test func drainingAnswersWhatWasReadThenClosesOnce() {
        var runner = BatchRunner()
        runner.linesArrived([Self.line(1)])
        let drain = runner.drainRequested(isWritable: true)
        #expect(Self.ids(drain.runBatch) == [1])
        #expect(!drain.close, "a batch is still in flight")
        let mayRead = runner.readRequested(isWritable: true)
        #expect(!mayRead, "nothing more to read: the kernel holds none")
        let finished = Self.answer(drain.runBatch, &runner)
        #expect(finished.next.close)
        let laterRead = runner.readComplete(isWritable: true)
        #expect(!laterRead.close, "close is asked for once")
    }

    @Test func drainingClosesOnlyOnceEveryBatchInFlightIsWritten() {
        var runner = BatchRunner()
        runner.linesArrived([Self.line(1)])
        let first = runner.readComplete(isWritable: true).runBatch
        runner.linesArrived([Self.line(2)])
        let second = runner.readComplete(isWritable: true).runBatch
        #expect(!runner.drainRequested(isWritable: true).close)
        let early = Self.answer(second, &runner)
        #expect(!early.next.close, "batch 1 is not written yet")
        let all = Self.answer(first, &runner)
        #expect(all.written == [1, 2] && all.next.close)
    }

    @Test func drainingReadsWhatTheKernelStillHoldsBeforeClosing() {
        let unread = Atomic<Int>(12)
        var runner = BatchRunner(unreadInput: { unread.load(ordering: .relaxed) })
        let drain = runner.drainRequested(isWritable: true)
        #expect(!drain.close, "bytes the device sent are still in the kernel")
        let mayRead = runner.readRequested(isWritable: true)
        #expect(mayRead, "so reading goes on")
        unread.store(0, ordering: .relaxed)
        runner.linesArrived([Self.line(1)])
        let read = runner.readComplete(isWritable: true)
        #expect(Self.ids(read.runBatch) == [1])
        #expect(!read.close)
        let finished = Self.answer(read.runBatch, &runner)
        #expect(finished.next.close)
    }

    @Test func anIdleConnectionClosesAtOnceWhenDrained() {
        var runner = BatchRunner()
        let drain = runner.drainRequested(isWritable: true)
        #expect(drain.close)
    }
}

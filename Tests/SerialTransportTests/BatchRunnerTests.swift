import SerialTransport
import Synchronization
import Testing
import WorkoutProtocol

/// The batch runner's decisions, with no channel: what runs when, when reading pauses and resumes, when a
/// draining connection closes.
@Suite struct BatchRunnerTests {
    static func line(_ id: Int) -> DecodedLine {
        DecodedLine(id: .integer(Int64(id)), command: .success(.endWorkout))
    }

    static func ids(_ lines: [DecodedLine]?) -> [Int64]? {
        lines?.map { line in if case .integer(let id) = line.id { id } else { -1 } }
    }

    @Test func linesOfOneReadRunAsOneBatchAndTheNextWaitsForIt() {
        var runner = BatchRunner()
        runner.linesArrived([Self.line(1)])
        runner.linesArrived([Self.line(2)])
        let first = runner.readComplete(isWritable: true)
        #expect(Self.ids(first.runBatch) == [1, 2])
        #expect(!first.close && !first.resumeReading)

        runner.linesArrived([Self.line(3)])
        let secondRead = runner.readComplete(isWritable: true)
        #expect(secondRead.runBatch == nil, "one batch at a time")
        #expect(runner.pendingLines == 1)
        let next = runner.batchFinished(isWritable: true)
        #expect(Self.ids(next.runBatch) == [3], "the waiting lines run next, as one batch")
        let last = runner.batchFinished(isWritable: true)
        #expect(last.runBatch == nil, "nothing left")
    }

    @Test func readingPausesAtThePendingLimitAndResumesWhenTheBatchTakesTheLines() {
        var runner = BatchRunner(maximumPendingLines: 2)
        runner.linesArrived([Self.line(1)])
        _ = runner.readComplete(isWritable: true)
        runner.linesArrived([Self.line(2)])
        let mayRead = runner.readRequested(isWritable: true)
        #expect(mayRead, "below the limit")
        runner.linesArrived([Self.line(3)])
        let mayReadMore = runner.readRequested(isWritable: true)
        #expect(!mayReadMore, "two lines wait behind the batch in flight")
        let finished = runner.batchFinished(isWritable: true)
        #expect(Self.ids(finished.runBatch) == [2, 3])
        #expect(finished.resumeReading, "the held read resumes once the waiting lines run")
        let last = runner.batchFinished(isWritable: true)
        #expect(!last.resumeReading, "resumed once only")
    }

    @Test func aLimitRaisedByAReloadReleasesAHeldRead() {
        var runner = BatchRunner(maximumPendingLines: 1)
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
        var runner = BatchRunner()
        runner.linesArrived([Self.line(1)])
        _ = runner.readComplete(isWritable: true)
        runner.linesArrived([Self.line(2)])
        _ = runner.readComplete(isWritable: true)
        let finished = runner.batchFinished(isWritable: false)
        #expect(finished.runBatch == nil, "the replies just written filled the device")
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
        let finished = runner.batchFinished(isWritable: true)
        #expect(finished.close)
        let laterRead = runner.readComplete(isWritable: true)
        #expect(!laterRead.close, "close is asked for once")
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
        let finished = runner.batchFinished(isWritable: true)
        #expect(finished.close)
    }

    @Test func anIdleConnectionClosesAtOnceWhenDrained() {
        var runner = BatchRunner()
        let drain = runner.drainRequested(isWritable: true)
        #expect(drain.close)
    }
}

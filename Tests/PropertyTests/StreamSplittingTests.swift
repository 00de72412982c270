import PropertyBased
import Testing
import WorkoutdTesting

/// A line may arrive split across any number of reads: where the reads fall must never matter.
@Suite("Byte stream cut into reads")
struct StreamSplittingTests {
    @Test("any byte stream cut at any points gives the same replies as the whole stream")
    func cutsNeverChangeReplies() async {
        await propertyCheck(count: 300, input: ByteStreamGenerators.stream, Gen.int(in: 0...100_000).array(of: 0...40))
        { stream, offsets in
            let whole = try InMemoryDevice().receive(stream, cutAt: [])
            let cut = try InMemoryDevice().receive(stream, cutAt: offsets.map { $0 % (stream.count + 1) })
            #expect(cut == whole)
            let expected = FramingExpectation(
                stream: stream,
                maximumLineLength: InMemoryDevice.defaultMaximumLineLength
            )
            #expect(whole.count == expected.replies)
            for line in whole {
                #expect(throws: Never.self) { try ReplyLineCheck.summary(of: line) }
            }
        }
    }

    @Test("a stream read one byte at a time gives the same replies as the whole stream")
    func byteAtATime() async {
        await propertyCheck(count: 60, input: ByteStreamGenerators.stream) { stream in
            let whole = try InMemoryDevice().receive(stream, cutAt: [])
            let bytewise = try InMemoryDevice().receive(stream, cutAt: 1..<max(1, stream.count))
            #expect(bytewise == whole)
        }
    }
}

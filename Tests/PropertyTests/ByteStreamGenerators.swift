import PropertyBased
import WorkoutdTesting

/// Byte streams a wearable (or a broken one) might send.
///
/// Commands good and bad, blank lines, CRLF, oversized lines, invalid UTF-8 and random bytes, in any order.
enum ByteStreamGenerators {
    private static let start =
        #"{"command_type":"start_workout","location":"Gary's Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}"#
    private static let limit = InMemoryDevice.defaultMaximumLineLength

    private static let lines: [String] = [
        start + "\n", start + "\r\n", #"{"command_type":"end_workout"}"# + "\n",
        #"{"command_type":"share_workout","service":"twitter"}"# + "\n",
        #"{"id":7,"command_type":"end_workout"}"# + "\r\n",
        #"{"id":"a","command_type":"share_workout","service":"x"}"# + "\n",
        #"{"command_type":"start_workout","location":"","date":"now","intensityLevel":11}"# + "\n",
        #"{"command_type":"dance"}"# + "\n", "[1,2]\n", "not json\n", "\n", "\r\n", "  \t \r\n", "\r\r\n",
        #"{"command_type":"#,  // a line finished by whatever comes next
        String(repeating: "x", count: limit + 1) + "\n",
        String(repeating: "y", count: limit) + "\r\n",
    ]
    private static let invalidUTF8: [[UInt8]] = [
        [0xFF, 0xFE, 0x0A], [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x7D, 0x0A], [0x00, 0x0A],
    ]

    static let fragments: [[UInt8]] = lines.map { Array($0.utf8) } + invalidUTF8

    static let fragment = Gen.oneOf(
        Gen<[UInt8]?>.element(of: fragments).map { $0 ?? [] },
        Gen.uint8(in: 0...255).array(of: 0...24)
    )

    static let stream = fragment.array(of: 0...24).map { Array($0.joined()) }
}

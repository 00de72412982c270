/// The mix a soak device sends.
///
/// Commands good and bad, blank lines, CRLF, oversized lines and invalid UTF-8, each with the number of replies it must
/// get.
struct SoakTraffic {
    struct Fragment {
        var bytes: [UInt8]
        var replies: Int
    }

    private var nextID: Int64

    init(firstID: Int64) { nextID = firstID }

    /// `count` fragments, as one byte stream, and the replies it must get in all.
    mutating func batch(of count: Int, using rng: inout some RandomNumberGenerator) -> (bytes: [UInt8], replies: Int) {
        var bytes: [UInt8] = []
        var replies = 0
        for _ in 0..<count {
            let fragment = next(using: &rng)
            bytes += fragment.bytes
            replies += fragment.replies
        }
        return (bytes, replies)
    }

    private mutating func next(using rng: inout some RandomNumberGenerator) -> Fragment {
        nextID += 1
        let id = nextID
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<25:
            return line(
                #"{"id":\#(id),"command_type":"start_workout","location":"Soak \#(id % 97)","date":"2020-03-16 19:45:13 +0000","intensityLevel":\#(1 + id % 10)}"#
            )
        case 25..<45:
            return line(#"{"id":"e\#(id)","command_type":"end_workout"}"#, crlf: id % 2 == 0)
        case 45..<60:
            return line(
                #"{"command_type":"share_workout","service":"\#(["facebook", "instagram", "twitter"][Int(id % 3)])"}"#
            )
        case 60..<68:
            return line("not json \(id)")
        case 68..<74:
            return line(#"{"id":\#(id),"command_type":"dance"}"#)
        case 74..<80:
            return line(#"{"id":\#(id),"command_type":"start_workout","location":"","date":"soon","intensityLevel":0}"#)
        case 80..<85:
            return Fragment(
                bytes: Array(#"{"command_type":"end_workout","x":""#.utf8) + [0xC3, 0x28, 0xFF] + Array("\"}\n".utf8),
                replies: 1
            )
        case 85..<90:
            return Fragment(
                bytes: Array(repeating: UInt8(ascii: "x"), count: Int.random(in: 4097...20_000, using: &rng)) + [0x0A],
                replies: 1
            )
        default:
            return Fragment(bytes: Array(["\n", "\r\n", "   \t\r\n"][Int(id % 3)].utf8), replies: 0)
        }
    }

    private func line(_ text: String, crlf: Bool = false) -> Fragment {
        Fragment(bytes: Array((text + (crlf ? "\r\n" : "\n")).utf8), replies: 1)
    }
}

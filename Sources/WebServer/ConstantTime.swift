/// Comparing secrets without leaking, through timing, how much of a guess was right.
enum ConstantTime {
    /// True when `a` and `b` hold the same bytes. Every byte of the longer one is visited whatever the
    /// contents, so the time depends only on the lengths.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let length = max(a.count, b.count)
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | (a.count == b.count ? 0 : 1)
        for index in 0..<length {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}

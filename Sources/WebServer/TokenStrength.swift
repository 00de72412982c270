import Foundation

/// Whether a login token is too easy to guess.
///
/// `check-config` and every start and reload refuse one whose randomness is under 128 bits, as far as its text can show
/// it. The estimate is an upper bound: the length of the shortest unit the token repeats (`aaaa` is one `a`), times the
/// bits a character of its alphabet carries (hex digits 4, letters and digits about 5.2, with punctuation about 6.6). A
/// token made by `openssl rand -hex 32` (256 bits) passes; a word or a phrase may pass the estimate without being
/// random, which no check can see.
public enum TokenStrength {
    public static let minimumBits = 128
    /// Longer is no safer and costs every comparison.
    public static let maximumLength = 512

    /// Why `token` is refused, or nil when it may be used.
    public static func problem(with token: String) -> String? {
        let characters = Array(token.unicodeScalars)
        guard let first = characters.first else { return "the token is empty" }
        guard characters.count <= maximumLength else {
            return "the token has \(characters.count) characters; at most \(maximumLength) are used"
        }
        if characters.allSatisfy({ $0 == first }) {
            return "the token is one character repeated; make a random one (openssl rand -hex 32)"
        }
        let bits = estimatedBits(characters)
        guard bits >= Double(minimumBits) else {
            return
                "the token carries at most \(Int(bits)) bits of randomness, under \(minimumBits); make a random one (openssl rand -hex 32)"
        }
        return nil
    }

    /// The upper bound described above.
    static func estimatedBits(_ characters: [Unicode.Scalar]) -> Double {
        let unit = Double(shortestPeriod(characters))
        return unit * log2(Double(alphabetSize(characters)))
    }

    private static func alphabetSize(_ characters: [Unicode.Scalar]) -> Int {
        let hex =
            characters.allSatisfy { "0123456789abcdef".unicodeScalars.contains($0) }
            || characters.allSatisfy { "0123456789ABCDEF".unicodeScalars.contains($0) }
        if hex { return 16 }
        var size = 0
        if characters.contains(where: { ("a"..."z").contains($0) }) { size += 26 }
        if characters.contains(where: { ("A"..."Z").contains($0) }) { size += 26 }
        if characters.contains(where: { ("0"..."9").contains($0) }) { size += 10 }
        if characters.contains(where: { !$0.properties.isAlphabetic && !("0"..."9").contains($0) }) { size += 33 }
        if characters.contains(where: { $0.properties.isAlphabetic && !$0.isASCII }) { size += 100 }
        return max(2, size)
    }

    /// The length of the shortest prefix the token is made of, repeated (a trailing part of it allowed).
    private static func shortestPeriod(_ characters: [Unicode.Scalar]) -> Int {
        for period in 1..<characters.count
        where (period..<characters.count).allSatisfy({ characters[$0] == characters[$0 - period] }) {
            return period
        }
        return characters.count
    }
}

/// A driver's command line that cannot be run with; the driver prints it with its usage.
public struct UsageError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The drivers' command lines: `--flag value` pairs, then optionally `--` and a command of their own.
public enum CommandLineFlags {
    /// Hands each `--flag value` pair to `handle` in order and returns what followed `--`.
    ///
    /// The result is empty without a `--`.
    public static func parse(
        _ arguments: some Sequence<String>,
        _ handle: (_ flag: String, _ value: String) throws(UsageError) -> Void
    ) throws(UsageError) -> [String] {
        var iterator = arguments.makeIterator()
        while let flag = iterator.next() {
            if flag == "--" { return Array(IteratorSequence(iterator)) }
            guard let value = iterator.next() else { throw UsageError("\(flag) needs a value") }
            try handle(flag, value)
        }
        return []
    }

    /// `value` as a count or a size, which must be above zero.
    public static func positive(_ value: String, _ flag: String) throws(UsageError) -> Int {
        guard let number = Int(value), number > 0 else {
            throw UsageError("\(flag) must be a positive integer; got '\(value)'")
        }
        return number
    }
}

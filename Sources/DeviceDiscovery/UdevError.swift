#if canImport(Glibc)
import Glibc
#endif

/// A libudev call failed; `errno` as libudev left it (libudev returns negative errno codes or NULL).
public struct UdevError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public var description: String { "\(operation) failed: \(String(cString: strerror(errno)))" }
}

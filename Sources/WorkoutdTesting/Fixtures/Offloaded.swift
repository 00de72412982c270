import Foundation

/// Runs blocking test I/O on a Dispatch thread, off the cooperative pool.
///
/// A daemon assembled in the test process needs that pool; a test body blocked on a pty or socket read there could
/// starve it of threads.
public func offloaded<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

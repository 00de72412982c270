import Logging

/// One device's run of failed opens: when to retry, when to give up, and what to log.
///
/// The decision itself is ``OpenFailurePolicy``'s; this keeps the state it needs between attempts (how many
/// failed, since when, whether the refusal was reported) and logs a node that stays unusable the same way as
/// one line, not one per retry. It does no I/O, so ``DeviceManager``'s serving loop stays about channels.
struct DeviceOpenAttempts {
    /// What the serving loop does next.
    enum Next: Equatable {
        case retry(after: Duration)
        case giveUp
    }

    private var attempt = 0
    private var firstFailure: ContinuousClock.Instant?
    private var refusalReported = false
    /// Whether this run's first refusal (EACCES, EPERM) was logged at warning, with how to fix it.
    private var refusalWarned = false
    /// The reason the node last could not be opened, and how many attempts in a row failed for it.
    private var lastFailure: String?
    private var repeats = 0

    /// After `SerialPort.open` failed.
    ///
    /// The policy's decision, logged once per reason (a reload may have changed the policy since the last attempt, so
    /// it comes with each call).
    mutating func openFailed(
        _ error: SerialPortError,
        policy: ReconnectPolicy,
        nodeExists: Bool,
        now: ContinuousClock.Instant = .now,
        logger: Logger
    ) -> Next {
        // A tty another program holds is not udev still settling: it is waited for until released.
        let since = error.isHeldByAnotherProgram ? now : firstFailure ?? now
        firstFailure = since
        let decision = OpenFailurePolicy(policy).decide(
            errno: error.errno,
            attempt: attempt,
            failingFor: now - since,
            nodeExists: nodeExists,
            reported: refusalReported
        )
        guard case .retry(let delay, let report) = decision else {
            logger.error("giving up on device: \(error)", metadata: ["after": "\(now - since)"])
            return .giveUp
        }
        // A refusal is a setting to fix, not udev settling: said at once, and once, with the fix.
        let warn = OpenFailurePolicy.isRefusal(error.errno) && !refusalWarned && !report
        if warn {
            refusalWarned = true
            logger.warning(
                "device refuses to open: \(error.summary)",
                metadata: ["error": "\(error)", "hint": "\(OpenFailurePolicy.hint(errno: error.errno))"]
            )
        }
        if report {
            refusalReported = true
            logger.error(
                "device refuses to open; retrying while its node exists",
                metadata: ["error": "\(error)", "hint": "\(OpenFailurePolicy.hint(errno: error.errno))"]
            )
        }
        // `retry_in` is the delay the reconnect policy in force gave this retry.
        let retryIn = "\(Int((delay / .milliseconds(1)).rounded()))ms"
        if error.summary != lastFailure {
            if !report && !warn {
                var metadata: Logger.Metadata = ["error": "\(error)", "retry_in": "\(retryIn)"]
                if let lastFailure { metadata["previous"] = "\(lastFailure) (\(repeats) times)" }
                logger.notice("device not openable yet; retrying", metadata: metadata)
            }
            lastFailure = error.summary
            repeats = 1
        } else {
            repeats += 1
            logger.debug("device still not openable; retrying", metadata: ["retry_in": "\(retryIn)"])
        }
        attempt += 1
        return .retry(after: delay)
    }

    /// After the node opened but its pipeline could not start: retried like a failed open.
    mutating func pipelineFailed(policy: ReconnectPolicy) -> Duration {
        defer { attempt += 1 }
        return policy.delay(after: attempt)
    }

    /// After the node opened: a new run starts. Returns the failures before it ("reason (N times)"), if any.
    mutating func opened(logger: Logger) -> String? {
        if refusalReported || refusalWarned { logger.notice("device opens again after being refused") }
        let failedOpens = lastFailure.map { "\($0) (\(repeats) times)" }
        self = DeviceOpenAttempts()
        return failedOpens
    }
}

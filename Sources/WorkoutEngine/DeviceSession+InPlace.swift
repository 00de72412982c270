import WorkoutProtocol

/// The session's entries for its device's event loop, called on the executor the session was placed on.
///
/// `Actor.assumeIsolated` does the same, but it reabstracts its closure on every call, and each call then allocated; a
/// device's loop enters the session twice per batch. Here each isolated body is a closure that captures nothing, made
/// once, and entered the way `assumeIsolated` enters its own: with the isolation checked first, a function of an
/// `isolated` session is called as a function of a plain one (the two have one calling convention).
extension DeviceSession {
    /// ``answerImmediately(_:from:inputWaiting:)``, from the session's own executor.
    ///
    /// `inputWaiting` is read by the caller: ask the device only when ``immediateCommitWaitsForDisk``. Traps when
    /// called from anywhere but the session's executor, as `assumeIsolated` does.
    public nonisolated func answerImmediatelyInPlace(_ lines: [DecodedLine], inputWaiting: Bool) -> [Reply]? {
        preconditionIsolated("a session is answered in place only on the executor it was placed on")
        return unsafeBitCast(Self.answerIsolated, to: AnswerInPlace.self)(self, lines, inputWaiting)
    }

    /// ``announceAnswered()``, from the session's own executor.
    ///
    /// Traps when called from anywhere else.
    public nonisolated func announceAnsweredInPlace() {
        preconditionIsolated("a session announces in place only on the executor it was placed on")
        unsafeBitCast(Self.announceIsolated, to: AnnounceInPlace.self)(self)
    }

    /// Whether a batch answered at once waits for the disk.
    ///
    /// Then ``answerImmediately(_:from:inputWaiting:)`` asks whether more input waits.
    public nonisolated var immediateCommitWaitsForDisk: Bool {
        immediateStore?.immediateCommitWaitsForDisk ?? false
    }

    private typealias AnswerInPlace = @Sendable (DeviceSession, [DecodedLine], Bool) -> [Reply]?
    private typealias AnnounceInPlace = @Sendable (DeviceSession) -> Void

    private static let answerIsolated: @Sendable (isolated DeviceSession, [DecodedLine], Bool) -> [Reply]? = {
        $0.answerImmediately($1, inputWaiting: $2)
    }
    private static let announceIsolated: @Sendable (isolated DeviceSession) -> Void = { $0.announceAnswered() }
}

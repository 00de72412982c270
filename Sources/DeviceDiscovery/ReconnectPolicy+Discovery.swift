import SerialTransport

extension ReconnectPolicy {
    /// The reconnect policy for a device udev announced.
    ///
    /// Retry quickly while udev finishes its rules (the node may not exist yet, or still have root's permissions), give
    /// up after a bounded time, and do not reopen after it goes away — udev announces it again when it comes back.
    public static let discovered = ReconnectPolicy(
        initialDelay: .milliseconds(1),
        maximumDelay: .milliseconds(500),
        giveUpAfter: .seconds(10),
        reopenAfterClose: false
    )
}

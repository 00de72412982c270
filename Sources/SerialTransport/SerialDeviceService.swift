import Logging
import ServiceLifecycle

/// The lifecycle service that serves devices until graceful shutdown, then drains them.
public struct SerialDeviceService: Service, CustomStringConvertible {
    public let manager: DeviceManager
    private let staticDevices: [DeviceSpec]
    private let drainTimeout: Duration

    public init(
        manager: DeviceManager,
        staticDevices: [DeviceSpec],
        drainTimeout: Duration = SerialTransportConfiguration.defaultDrainTimeout
    ) {
        self.manager = manager
        self.staticDevices = staticDevices
        self.drainTimeout = drainTimeout
    }

    public var description: String { "SerialDeviceService" }

    public func run() async throws {
        for spec in staticDevices {
            await manager.attach(spec)
        }
        try? await gracefulShutdown()
        await manager.drainAll(timeout: drainTimeout)
    }
}

import SerialTransport
import WorkoutEngine

extension ReloadHook {
    /// `devices:` (and `--device`): listed paths not being served are attached with the new serial settings.
    /// Paths already served stay connected, even if no longer listed: a reload never cuts a wearable off.
    static func configuredDevices(_ manager: DeviceManager) -> ReloadHook {
        ReloadHook(name: "devices") { configuration in
            let served = Set(await manager.devices().map(\.path))
            let added = configuration.devices.filter { !served.contains($0) }
            return {
                for path in added {
                    await manager.attach(DeviceSpec(
                        path: path, identity: DeviceIdentity(path), baud: configuration.baud, policy: configuration.reconnect))
                }
            }
        }
    }
}

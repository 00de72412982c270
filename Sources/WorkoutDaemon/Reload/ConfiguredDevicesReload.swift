import ControlPlane
import SerialTransport
import WorkoutEngine
import WorkoutProtocol

extension ReloadHook {
    /// `devices:` (and `--device`), `serial.*`, `reconnect.*`.
    ///
    /// Listed paths not being served are attached with the new settings; listed paths already served stay connected and
    /// take the new baud rate and reconnect delays at their next (re)open, the new line limits and reply line ending at
    /// once. Paths no longer listed stay connected too: a reload never cuts a wearable off. `devices.allowed_serials`
    /// applies to devices seen from now on, and serves at once the refused ones it now lists.
    static func configuredDevices(_ manager: DeviceManager) -> ReloadHook {
        ReloadHook(name: "devices") { configuration in
            {
                await manager.update(options: configuration.serial.pipeline)
                await manager.update(allowedSerials: configuration.allowedSerials)
                for path in configuration.devices {
                    await manager.attach(
                        DeviceSpec(
                            path: path,
                            identity: DeviceIdentity(path),
                            baud: configuration.serial.baud,
                            policy: configuration.serial.reconnect
                        )
                    )
                }
            }
        }
    }

    /// `serial.max_line_bytes` for `workoutctl send`.
    ///
    /// An injected line is held to the same limit as a device's.
    static func controlLineLimit(_ responder: ControlResponder) -> ReloadHook {
        ReloadHook(name: "control") { configuration in
            { responder.update(maximumLineLength: configuration.serial.pipeline.maximumLineLength) }
        }
    }
}

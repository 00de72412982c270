import WorkoutEngine
import WorkoutProtocol

extension DiscoveredDevice {
    /// Who the device is, independent of its `ttyACMn` name.
    ///
    /// `ID_SERIAL` (vendor, model and serial number, as udev's `usb_id` builds it), else its `/dev/serial/by-id/` link,
    /// else the syspath.
    public var identity: DeviceIdentity {
        if let serial = properties["ID_SERIAL"], !serial.isEmpty {
            return DeviceIdentity(serial)
        }
        let links = properties["DEVLINKS"]?.split(separator: " ") ?? []
        if let byID = links.first(where: { $0.hasPrefix("/dev/serial/by-id/") }) {
            return DeviceIdentity(String(byID))
        }
        return DeviceIdentity(syspath)
    }
}

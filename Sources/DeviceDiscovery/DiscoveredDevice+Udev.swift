import CLibudev

extension DiscoveredDevice {
    /// Copies everything workoutd needs out of a `udev_device`; the caller still owns (and unrefs) it.
    /// `nil` when libudev cannot say where the device lives.
    init?(copying device: OpaquePointer, action: Action) {
        guard let syspath = udev_device_get_syspath(device) else { return nil }
        var properties: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(device)
        while let current = entry {
            if let name = udev_list_entry_get_name(current) {
                properties[String(cString: name)] = udev_list_entry_get_value(current).map { String(cString: $0) } ?? ""
            }
            entry = udev_list_entry_get_next(current)
        }
        self.init(
            action: action,
            syspath: String(cString: syspath),
            devnode: udev_device_get_devnode(device).map { String(cString: $0) },
            properties: properties
        )
    }
}

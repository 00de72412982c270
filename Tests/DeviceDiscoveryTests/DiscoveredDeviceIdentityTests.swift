import DeviceDiscovery
import Testing
import WorkoutEngine
import WorkoutProtocol

struct DiscoveredDeviceIdentityTests {
    private func device(node: String, _ properties: [String: String]) -> DiscoveredDevice {
        DiscoveredDevice(
            action: .add,
            syspath: "/sys/devices/usb1/1-1/1-1:1.0/tty/\(node)",
            devnode: "/dev/\(node)",
            properties: properties
        )
    }

    @Test func identityIsTheUSBSerialNotTheNodeName() {
        let first = device(node: "ttyACM0", ["ID_SERIAL": "Workoutd_Wearable_WRB-0042"])
        let renumbered = device(node: "ttyACM7", ["ID_SERIAL": "Workoutd_Wearable_WRB-0042"])
        #expect(first.identity == DeviceIdentity("Workoutd_Wearable_WRB-0042"))
        #expect(first.identity == renumbered.identity)
    }

    @Test func fallsBackToTheByIDLinkThenTheSyspath() {
        let linked = device(
            node: "ttyACM0",
            [
                "DEVLINKS": "/dev/serial/by-path/pci-0000:00:14.0-usb-0:1:1.0 /dev/serial/by-id/usb-Acme_Thing-if00"
            ]
        )
        #expect(linked.identity == DeviceIdentity("/dev/serial/by-id/usb-Acme_Thing-if00"))
        let bare = device(node: "ttyACM0", ["ID_SERIAL": ""])
        #expect(bare.identity == DeviceIdentity("/sys/devices/usb1/1-1/1-1:1.0/tty/ttyACM0"))
    }
}

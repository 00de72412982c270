import DeviceDiscovery
import Testing

struct MatchRuleTests {
    private let wearable = DiscoveredDevice(
        action: .add,
        syspath: "/sys/devices/usb1/1-1/1-1:1.0/tty/ttyACM0",
        devnode: "/dev/ttyACM0",
        properties: [
            "ID_VENDOR_ID": "1209", "ID_MODEL_ID": "a7e1", "ID_SERIAL_SHORT": "WRB-0042",
            "ID_USB_DRIVER": "cdc_acm", "WORKOUTD_DEVICE": "1",
        ]
    )

    @Test func defaultRuleServesDevicesMarkedByTheUdevRule() throws {
        let matcher = try DeviceMatcher(parsing: DeviceMatcher.defaultRules)
        #expect(matcher == DeviceMatcher.standard)
        #expect(matcher.firstMatch(wearable)?.description == "WORKOUTD_DEVICE=1")
        var unmarked = wearable
        unmarked.properties["WORKOUTD_DEVICE"] = nil
        #expect(matcher.firstMatch(unmarked) == nil)
    }

    @Test func everyConditionOfARuleMustHold() throws {
        let matcher = try DeviceMatcher(parsing: [
            "ID_VENDOR_ID=1209 ID_MODEL_ID=ffff", "ID_SERIAL_SHORT=WRB-* ID_USB_DRIVER=cdc_acm",
        ])
        #expect(matcher.firstMatch(wearable)?.description == "ID_SERIAL_SHORT=WRB-* ID_USB_DRIVER=cdc_acm")
        var other = wearable
        other.properties["ID_USB_DRIVER"] = "ftdi_sio"
        #expect(matcher.firstMatch(other) == nil)
    }

    @Test func globsFollowFnmatch() throws {
        let rule = try MatchRule(parsing: "ID_SERIAL_SHORT=WRB-[0-9][0-9]4?")
        #expect(rule.matches(["ID_SERIAL_SHORT": "WRB-0042"]))
        #expect(!rule.matches(["ID_SERIAL_SHORT": "WRB-00X2"]))
        #expect(!rule.matches([:]), "a missing property never matches, not even *")
    }

    @Test func aDeviceWithoutANodeIsNeverOurs() throws {
        var nodeless = wearable
        nodeless.devnode = nil
        #expect(try DeviceMatcher(parsing: ["WORKOUTD_DEVICE=1"]).firstMatch(nodeless) == nil)
    }

    @Test(arguments: [
        ("", "the rule is empty"),
        ("WORKOUTD_DEVICE", "'WORKOUTD_DEVICE' is not of the form PROPERTY=glob"),
        ("ID_VENDOR_ID=1209 =a7e1", "'' is not a udev property name"),
        ("ID-VENDOR=1209", "'ID-VENDOR' is not a udev property name"),
        ("ID_SERIAL_SHORT=", "has an empty pattern"),
    ])
    func badRulesAreRejectedByName(rule: String, reason: String) {
        #expect {
            _ = try DeviceMatcher(parsing: ["WORKOUTD_DEVICE=1", rule])
        } throws: { error in
            guard let error = error as? MatchRuleError else { return false }
            return error.rule == rule && error.reason.contains(reason)
                && error.description.hasPrefix("discovery.match rule \"\(rule)\"")
        }
    }

    @Test func anEmptyRuleListIsAnError() {
        #expect(throws: MatchRuleError.self) { try DeviceMatcher(parsing: []) }
    }
}

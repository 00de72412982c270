import Foundation
import WorkoutProtocol

/// Why a device is not served although it matched: its node is never opened.
public enum DeviceRefusal: Sendable, Hashable, CustomStringConvertible {
    /// Another node already serves this identity.
    ///
    /// A second device copies a wearable's serial, or the same wearable is on two nodes. Two devices driving one
    /// session could end or share each other's workouts.
    case identityInUse(node: String)
    /// `devices.allowed_serials` is set and does not list this identity.
    case notEnrolled

    public var description: String {
        switch self {
        case .identityInUse(let node): "identity already attached on \(node)"
        case .notEnrolled: "not in devices.allowed_serials"
        }
    }
}

/// A matching device that is refused, as `workoutctl devices` shows it.
public struct RefusedDevice: Sendable, Hashable {
    public var identity: DeviceIdentity
    public var path: String
    public var refusal: DeviceRefusal
    public var since: Date
}

/// A device refused because it is not enrolled, remembered (since start) so an operator can enrol it.
///
/// `workoutctl devices --unknown`.
public struct UnknownDevice: Sendable, Hashable {
    public var identity: DeviceIdentity
    /// The node it was last seen on.
    public var path: String
    public var firstSeen: Date
    public var lastSeen: Date
    /// How many times it was plugged in (or announced) and refused.
    public var sightings: Int
}

/// Which matching devices are served.
///
/// At most one node per identity, and, with `devices.allowed_serials`, only enrolled identities. A pure value: the
/// ``DeviceManager`` asks it before it opens anything.
struct DeviceAdmission: Sendable {
    /// `devices.allowed_serials`; nil admits every identity.
    var allowedSerials: Set<String>?
    /// At most this many unknown identities are remembered.
    ///
    /// The longest unseen is forgotten first (a device that invents a new serial at each plug must not grow the
    /// daemon's memory).
    static let unknownLimit = 256
    private(set) var unknown: [DeviceIdentity: UnknownDevice] = [:]

    init(allowedSerials: Set<String>?) {
        self.allowedSerials = allowedSerials
    }

    /// Why `spec` may not be served, given the identities served now (node → identity); nil to serve it.
    func refusal(for spec: DeviceSpec, served: [String: DeviceIdentity]) -> DeviceRefusal? {
        if spec.requiresEnrolment, let allowedSerials, !allowedSerials.contains(spec.identity.rawValue) {
            return .notEnrolled
        }
        if let node = served.filter({ $0.key != spec.path && $0.value == spec.identity }).keys.min() {
            return .identityInUse(node: node)
        }
        return nil
    }

    /// Remembers a refused unknown identity; returns whether it is new since start.
    @discardableResult
    mutating func noteUnknown(_ spec: DeviceSpec, at now: Date = Date()) -> Bool {
        if var known = unknown[spec.identity] {
            known.lastSeen = now
            known.path = spec.path
            known.sightings += 1
            unknown[spec.identity] = known
            return false
        }
        if unknown.count >= Self.unknownLimit, let oldest = unknown.values.min(by: { $0.lastSeen < $1.lastSeen }) {
            unknown[oldest.identity] = nil
        }
        unknown[spec.identity] = UnknownDevice(
            identity: spec.identity,
            path: spec.path,
            firstSeen: now,
            lastSeen: now,
            sightings: 1
        )
        return true
    }

    /// Forgets unknown identities the allowed list now names (a reload enrolled them).
    mutating func forgetEnrolled() {
        guard let allowedSerials else { return unknown.removeAll() }
        unknown = unknown.filter { !allowedSerials.contains($0.key.rawValue) }
    }
}

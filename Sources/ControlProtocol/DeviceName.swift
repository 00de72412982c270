import Foundation
import WorkoutProtocol

/// A name people give a wearable (`workoutctl label <serial> <name>`).
///
/// What one may be, and the `label` result.
public enum DeviceName {
    /// Characters (Unicode scalars) a name may have at most: it labels a row on a phone, not a paragraph.
    public static let maximumLength = 64

    /// `name` as it is kept (spaces trimmed at both ends), or why it cannot be one.
    public static func validated(_ name: String) -> Result<String, ControlError> {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            return .failure(ControlError(.invalidParams, "A name must not be empty (to remove one, leave it out)."))
        }
        guard trimmed.unicodeScalars.count <= maximumLength else {
            return .failure(
                ControlError(
                    .invalidParams,
                    "A name has at most \(maximumLength) characters; got \(trimmed.unicodeScalars.count)."
                )
            )
        }
        if let finding = UntrustedText.firstForbidden(in: trimmed) {
            return .failure(ControlError(.invalidParams, finding.message(field: "name")))
        }
        return .success(trimmed)
    }
}

/// The `label` result.
///
/// The identity that was named (a node given as `device` is resolved to it) and its name now.
public struct LabelResult: Codable, Hashable, Sendable {
    public var device: String
    /// Nil when the name was removed.
    public var name: String?
    /// Whether a device with this identity is attached now (a name can be given before it is plugged in).
    public var attached: Bool

    public init(device: String, name: String?, attached: Bool) {
        self.device = device
        self.name = name
        self.attached = attached
    }
}

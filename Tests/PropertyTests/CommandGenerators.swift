import Foundation
import PropertyBased
import WorkoutProtocol

/// Generators for every kind of ``Command`` a wearable can send.
enum CommandGenerators {
    /// Printable ASCII (quotes and backslashes included), Latin and CJK letters, emoji.
    static let locationCharacter = Gen.oneOf(
        Gen.character(in: " "..."~"),
        Gen.character(in: "\u{A0}"..."\u{D7FF}"),
        Gen.character(in: "\u{1F300}"..."\u{1FAFF}")
    )

    /// Valid locations: 1–256 characters (Unicode scalars), not all whitespace.
    ///
    /// Without the bidi and line separator characters the ranges above include (refused with `invalid_field`).
    static let location = locationCharacter.string(of: 1...Workout.maximumLocationLength)
        .filter {
            !$0.allSatisfy(\.isWhitespace) && $0.unicodeScalars.count <= Workout.maximumLocationLength
                && UntrustedText.firstForbidden(in: $0) == nil
        }

    /// The wire carries whole seconds, so only whole-second dates can come back unchanged.
    static let wholeSecondDate = Gen.dateTime.map {
        Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down))
    }

    static let workout = zip(location, wholeSecondDate, Gen.int(in: Workout.intensityRange))
        .map { Workout(location: $0.0, date: $0.1, intensityLevel: $0.2) }

    static let command = Gen.oneOf(
        workout.map { Command.startWorkout($0) },
        Gen.always(Command.endWorkout),
        Gen<ShareService>.case.map { Command.shareWorkout($0) }
    )
}

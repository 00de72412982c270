/// The version both commands report with `--version`.
///
/// The control socket's status and the central `hubs` table carry it too; mk/install.mk reads it from this file
/// for the package's version and the manuals.
public enum WorkoutdVersion {
    public static let current = "0.2.0"
}

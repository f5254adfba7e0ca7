/// The version of Cordis that this library and `cordis-node` belong to.
///
/// `cordis-node --version` prints it, and a node reports it in its status.
public enum CordisVersion {
    /// The current version, as `MAJOR.MINOR.PATCH`.
    public static let current = "0.1.0"
}

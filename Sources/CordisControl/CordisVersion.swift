/// The version of Cordis that these libraries, `cordis-node` and `cordis-console` belong to.
///
/// `cordis-node --version` and `cordis-console --version` print it, and a node reports it in its status.
/// (`CordisNode` re-exports it with the rest of `CordisControl`.)
public enum CordisVersion {
    /// The current version, as `MAJOR.MINOR.PATCH`.
    public static let current = "0.1.0"
}

/// The version of Cordis this node runs.
public enum CordisVersion {
    /// The version string printed by `--version` and reported in status.
    public static let current = "0.1.0"
}

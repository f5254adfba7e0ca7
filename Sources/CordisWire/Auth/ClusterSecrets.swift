/// The secrets a peer authenticates with: the first proves, any of them is accepted (for rotation).
///
/// During a rotation a node holds two secrets: give every node `[old, new]`, then `[new, old]`, then
/// `[new]`; at every step any two nodes accept each other's proofs.
public struct ClusterSecrets: Sendable, Hashable {
    /// The secret this side proves with.
    public let proving: ClusterSecret
    /// Every secret this side accepts, `proving` first.
    public let accepted: [ClusterSecret]

    /// At most this many secrets are held at once (a rotation overlaps two).
    public static let maximumCount = 2

    /// Secrets from a proving secret and, during a rotation, one more accepted secret.
    public init(proving: ClusterSecret, alsoAccepting other: ClusterSecret? = nil) {
        self.proving = proving
        self.accepted = [proving] + (other.map { [$0] } ?? [])
    }

    /// Loads one or two secret files (`--secret-file` given once or twice); the first proves.
    ///
    /// Throws the first file's `WireError` (see `ClusterSecret.load(contentsOf:)`), or `.secretUnreadable`
    /// when no file or more than two are given.
    public static func load(files: [String]) throws(WireError) -> ClusterSecrets {
        guard !files.isEmpty, files.count <= maximumCount else {
            throw WireError(.secretUnreadable, "give one or two secret files, not \(files.count)")
        }
        let first = try ClusterSecret.load(contentsOf: files[0])
        let second = files.count > 1 ? try ClusterSecret.load(contentsOf: files[1]) : nil
        return ClusterSecrets(proving: first, alsoAccepting: second)
    }
}

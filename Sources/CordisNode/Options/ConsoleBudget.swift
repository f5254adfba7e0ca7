/// What one console identity (a user, an operator certificate's name, `cluster`) may hold on a node,
/// over all its links together: links, requests running, follow subscriptions (`--console-links`,
/// `--console-requests`, `--console-follows`). A link of its own runs at most 64 requests and holds at
/// most 16 subscriptions whatever these say.
public struct ConsoleBudget: Sendable, Hashable {
    /// Links one identity holds at most; nil: 64, or a quarter of the node's connection budget when
    /// that is smaller.
    public var links: Int?
    /// Requests one identity may have running at once.
    public var requests: Int
    /// Follow subscriptions one identity may hold.
    public var follows: Int

    /// The most any of the three may be set to.
    public static let maximum = 65_536

    /// A budget; the defaults are the node's.
    public init(links: Int? = nil, requests: Int = 256, follows: Int = 64) {
        self.links = links
        self.requests = requests
        self.follows = follows
    }
}

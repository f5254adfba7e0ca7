import CordisJSON

/// A change a node pushes to a console after a `subscribe` request: a fiber's `internal/status` or a
/// Loader's `loader/entry`, with the node it happened on and when.
///
/// `id` is the id of the `subscribe` request the event answers, so a console can hold several streams.
public struct ControlEvent: Sendable, Hashable {
    /// The id of the `subscribe` request.
    public var id: Int
    /// The member the change happened on.
    public var node: String
    /// When it happened: seconds since 1970 (UTC).
    public var time: Double
    /// `status` (a fiber changed state) or `entry` (the Loader changed an entry).
    public var kind: String
    /// The change: for `status` `fiber`, `entry`, `plugin`, `from`, `to`; for `entry` `entry`, `change`.
    public var detail: JSONObject

    /// Creates an event.
    public init(id: Int, node: String, time: Double, kind: String, detail: JSONObject) {
        self.id = id
        self.node = node
        self.time = time
        self.kind = kind
        self.detail = detail
    }
}

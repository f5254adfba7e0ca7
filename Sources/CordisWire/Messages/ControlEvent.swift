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

/// An `event` message encoded once for many subscriptions: the copies differ only in `id`, so each is
/// the shared bytes with its id spliced in (see `Link.enqueue(_:ids:)`). Byte for byte what
/// `WireMessage.event` encodes for the same event and id.
package struct SharedEvent: Sendable {
    /// The event, for traffic counts and for a link that cannot take the shared form.
    package let event: ControlEvent
    /// `{"type":"event","id":` (what precedes the id).
    private let head: [UInt8]
    /// What follows the id, up to and with the closing brace.
    private let tail: [UInt8]

    /// Encodes `event` (its `id` is ignored).
    package init(_ event: ControlEvent) {
        self.event = event
        var probe = event
        probe.id = 0
        var bytes: [UInt8] = []
        WireMessage.event(probe).encode(into: &bytes)
        // The id is the member right after `type`: the head is what precedes its digit `0`. (Were the
        // encoding ever to change, `head` stays empty and each copy is encoded whole.)
        let marker = Array(#"{"type":"event","id":0"#.utf8)
        let split = bytes.starts(with: marker) ? marker.count : 0
        self.head = split > 0 ? Array(marker.dropLast()) : []
        self.tail = split > 0 ? Array(bytes[split...]) : []
    }

    /// Appends the event as subscription `id`'s copy (a whole JSON object, no length prefix).
    func encode(id: Int, into buffer: inout [UInt8]) {
        guard !head.isEmpty else {
            var copy = event
            copy.id = id
            WireMessage.event(copy).encode(into: &buffer)
            return
        }
        buffer.append(contentsOf: head)
        JSONSerializer.appendInteger(Int64(id), to: &buffer)
        buffer.append(contentsOf: tail)
    }
}

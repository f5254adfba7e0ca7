import CordisJSON
import CordisWire

/// An event as the control API writes it in a `subscribe` result and as `events --json` prints it:
/// `node`, `time`, `kind`, `detail`, in this order. It is a `ControlEvent` without the subscription
/// id, which travels in the `event` message but not in the record.
///
/// Decoding needs every member; `detail` must be an object.
public struct EventRecord: Sendable, Hashable, Codable {
    /// The member the change happened on.
    public var node: String
    /// When it happened: seconds since 1970 (UTC).
    public var time: Double
    /// `status` (a fiber changed state) or `entry` (the Loader changed an entry).
    public var kind: String
    /// The change (see `ControlEvent.detail`).
    public var detail: JSONObject

    /// The JSON members, in the order they are written.
    enum CodingKeys: String, CodingKey {
        case node, time, kind, detail
    }

    /// Creates a record.
    public init(node: String, time: Double, kind: String, detail: JSONObject) {
        self.node = node
        self.time = time
        self.kind = kind
        self.detail = detail
    }

    /// The record of `event`.
    public init(_ event: ControlEvent) {
        self.init(node: event.node, time: event.time, kind: event.kind, detail: event.detail)
    }

    /// The event of this record, for subscription `id`.
    public func event(id: Int = 0) -> ControlEvent {
        ControlEvent(id: id, node: node, time: time, kind: kind, detail: detail)
    }

    /// Decodes a record. Throws `DecodingError` (with `JSONValueDecoder`, `ConfigError`).
    public init(from decoder: any Decoder) throws {
        let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
        node = try container.decode(String.self, forKey: .node)
        time = try container.decode(Double.self, forKey: .time)
        kind = try container.decode(String.self, forKey: .kind)
        let detail = try container.decode(JSONValue.self, forKey: .detail)
        guard case .object(let object) = detail else {
            throw DecodingError.typeMismatch(JSONObject.self, .init(
                codingPath: container.codingPath + [CodingKeys.detail],
                debugDescription: "expected object, got \(detail.kindName)"))
        }
        self.detail = object
    }

    /// Encodes the record. Throws `EncodingError` for a time that is not finite.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(node, forKey: .node)
        try container.encode(time, forKey: .time)
        try container.encode(kind, forKey: .kind)
        try container.encode(JSONValue.object(detail), forKey: .detail)
    }
}

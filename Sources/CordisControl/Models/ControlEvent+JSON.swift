import CordisJSON
import CordisWire

/// An event as the control API writes it in a `subscribe` result and as `events --json` prints it:
/// `node`, `time`, `kind`, `detail`.
extension ControlEvent {
    /// The JSON object (without the subscription id).
    public var json: JSONValue {
        .object(["node": .string(node), "time": .double(time), "kind": .string(kind), "detail": .object(detail)])
    }

    /// Reads an event object of a `subscribe` result (its id is 0); nil when a member is missing.
    public init?(json: JSONValue) {
        guard let node = json["node"]?.stringValue, let time = json["time"]?.doubleValue,
              let kind = json["kind"]?.stringValue, let detail = json["detail"]?.objectValue
        else { return nil }
        self.init(id: 0, node: node, time: time, kind: kind, detail: detail)
    }
}

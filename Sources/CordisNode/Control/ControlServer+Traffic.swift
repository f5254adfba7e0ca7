import Cordis
import CordisWire

/// `traffic`: the messages this node sent and received since it started, by kind, so an operator (or
/// the scale benchmark) can tell heartbeats and membership from calls and control.
extension ControlServer {
    /// `{"node", "seconds", "sent": {KIND: N…}, "received": {KIND: N…}}`, every kind present.
    func trafficReport() -> JSONValue {
        let counts = node.traffic.snapshot
        func table(_ counted: [TrafficCounter.Kind: Int]) -> JSONValue {
            var object = JSONObject()
            for kind in TrafficCounter.Kind.allCases {
                object[kind.rawValue] = .integer(counted[kind] ?? 0)
            }
            return .object(object)
        }
        let seconds = NodeMetrics.seconds(since: node.traffic.since)
        return .object([
            "node": .string(node.name),
            "seconds": .number(seconds),
            "sent": table(counts.sent),
            "received": table(counts.received),
        ])
    }
}

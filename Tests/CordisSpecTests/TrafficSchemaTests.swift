import CordisJSON
import Testing

/// The `traffic` result in `docs/schemas/control.schema.json`.
@Suite("The control schema describes the traffic result")
struct TrafficSchemaTests {
    static let golden = #"{"node":"a","seconds":12.5,"sent":{"heartbeat":24,"membership":1,"announcement":0,"call":3,"control":2,"etcd":0,"other":0},"received":{"heartbeat":24,"membership":1,"announcement":1,"call":3,"control":2,"etcd":0,"other":0}}"#

    @Test("a traffic result fits the schema")
    func goldenFits() throws {
        let problems = try Repository.schemas().problems(
            of: try JSONParser().parse(Self.golden), file: "control.schema.json", definition: "traffic")
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("a traffic result without a kind or with a negative count does not fit", arguments: [
        #"{"node":"a","seconds":1,"sent":{"heartbeat":1},"received":{"heartbeat":1,"membership":0,"announcement":0,"call":0,"control":0,"etcd":0,"other":0}}"#,
        #"{"node":"a","seconds":1,"sent":{"heartbeat":-1,"membership":0,"announcement":0,"call":0,"control":0,"etcd":0,"other":0},"received":{"heartbeat":1,"membership":0,"announcement":0,"call":0,"control":0,"etcd":0,"other":0}}"#,
    ])
    func wrongShapes(json: String) throws {
        let problems = try Repository.schemas().problems(
            of: try JSONParser().parse(json), file: "control.schema.json", definition: "traffic")
        #expect(!problems.isEmpty)
    }
}

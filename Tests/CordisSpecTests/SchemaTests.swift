import CordisControl
import CordisJSON
import CordisWire
import Testing

/// `docs/schemas/` against the implementation: every example frame of the protocol page is a golden
/// fixture of the codec and a valid message, and the control models' golden shapes are valid results.
@Suite("The published schemas describe what the implementation sends")
struct SchemaTests {
    @Test("every example frame in wire-protocol.md decodes, re-encodes to the same bytes and fits the message schema")
    func protocolExamplesAreGoldenAndValid() throws {
        let schemas = try Repository.schemas()
        let examples = try Repository.protocolExamples()
        #expect(examples.count >= 29, "the page has \(examples.count) example frames")
        for (length, json) in examples {
            let bytes = Array(json.utf8)
            #expect(bytes.count == length, "the length prefix \(length) of \(json) is not its \(bytes.count) bytes")
            if json.hasPrefix(#"{"seq":"#) { continue }  // a sealed frame: its prefix is not a message member
            let message = try bytes.withUnsafeBytes { try WireMessage(payload: $0) }
            #expect(String(decoding: message.encoded, as: UTF8.self) == json, "\(json) does not re-encode to itself")
            let problems = schemas.problems(of: try JSONParser().parse(json), file: "messages.schema.json")
            #expect(problems.isEmpty, "\(json): \(problems)")
        }
    }

    @Test("the message schema refuses a message the decoder refuses", arguments: [
        #"{"type":"ping","id":"17"}"#,
        #"{"type":"hello","version":"01.3","role":"node","name":"a","incarnation":"a-1","addresses":[],"capabilities":[],"nonce":"00","auth":"none"}"#,
        #"{"type":"announce","service":"clock","interface":"ClockAPI","interfaceVersion":"1","node":"bad name","fiber":7}"#,
        #"{"type":"call","id":1,"service":"s","method":"m"}"#,
        #"{"type":"response","id":1}"#,
    ])
    func schemaRefusesWhatTheDecoderRefuses(json: String) throws {
        let schemas = try Repository.schemas()
        #expect(!schemas.problems(of: try JSONParser().parse(json), file: "messages.schema.json").isEmpty)
        let bytes = Array(json.utf8)
        #expect(throws: WireError.self) { try bytes.withUnsafeBytes { try WireMessage(payload: $0) } }
    }

    /// The control models' golden texts (the shapes node and console agree on), by definition.
    static let controlGoldens: [(definition: String, json: String)] = [
        ("nodeStatus", #"{"name":"a","addresses":["unix:/run/cordis/a.sock"],"incarnation":"3f2a","version":"0.3.0","reachable":true,"entries":[{"id":"greeter","plugin":"greeter","parent":null,"disabled":false,"config":{},"state":"active","error":null},{"id":"off","plugin":"counter","parent":"tools","disabled":true,"config":{"start":{"$env":"START","default":3}},"state":null,"error":null}],"fibers":[{"fiber":7,"entry":"greeter","plugin":"greeter","state":"active","provides":[],"injects":{"clock":{"node":"b","entry":"clock","fiber":3,"realm":null}},"missing":[],"error":null},{"fiber":9,"entry":null,"plugin":"remote:clock","state":"active","provides":[{"service":"clock","realm":null},{"service":"clock","realm":"eu"}],"injects":{},"missing":[],"error":null}]}"#),
        ("nodeStatus", #"{"name":"c","addresses":[],"incarnation":null,"version":null,"reachable":false,"entries":[],"fibers":[],"unreachable":"the link to c was lost"}"#),
        ("fiberStatus", #"{"fiber":4,"entry":"badge","plugin":"badge","state":"pending","provides":[],"injects":{"counter":null,"clock":{"node":"a","entry":null,"fiber":2,"realm":"private"}},"missing":["counter"],"waiting":{"counter":"counter@eu is in realm eu, badge injects it from the root realm"},"error":null}"#),
        ("fiberStatus", #"{"fiber":5,"entry":"x","plugin":"x","state":"failed","provides":[{"service":"x","realm":"lab"}],"injects":{},"missing":[],"error":"boom"}"#),
        ("entryStatus", #"{"id":"bad","plugin":"nope","parent":null,"disabled":false,"state":null,"error":"unknown plugin nope"}"#),
        ("member", #"{"name":"a","addresses":["unix:/a.sock","tcp:127.0.0.1:7000"],"incarnation":"3f2a","self":true,"reachable":true}"#),
        ("catalogPlugin", #"{"name":"counter","injects":["clock"],"provides":["counter"],"config":[{"path":"start","type":"Int","optional":true},{"path":"label","type":"String","optional":false}]}"#),
        ("eventRecord", #"{"node":"a","time":1733000000.25,"kind":"status","detail":{"fiber":7,"entry":null,"plugin":"greeter","from":"pending","to":"active"}}"#),
        ("eventRecord", #"{"node":"a","time":1733000000.5,"kind":"entry","detail":{"entry":"greeter","change":"disabled"}}"#),
        ("entryChange", #"{"entry":"greeter","state":null,"disabled":true,"error":null}"#),
        ("removed", #"{"entry":"greeter","removed":true}"#),
        ("forgotten", #"{"forgotten":"c","addresses":["unix:/run/cordis/c.sock"]}"#),
        ("subscribed", #"{"events":[]}"#),
        ("unsubscribed", #"{"unsubscribed":true}"#),
    ]

    @Test("the control models' golden shapes fit the control schema and round-trip through the models")
    func controlGoldensAreValid() throws {
        let schemas = try Repository.schemas()
        for (definition, json) in Self.controlGoldens {
            let value = try JSONParser().parse(json)
            let problems = schemas.problems(of: value, file: "control.schema.json", definition: definition)
            #expect(problems.isEmpty, "\(definition) \(json): \(problems)")
            let reencoded: JSONValue? = switch definition {
            case "nodeStatus": try JSONValueEncoder().encode(try JSONValueDecoder().decode(NodeStatus.self, from: value))
            case "fiberStatus": try JSONValueEncoder().encode(try JSONValueDecoder().decode(FiberStatus.self, from: value))
            case "entryStatus": try JSONValueEncoder().encode(try JSONValueDecoder().decode(EntryStatus.self, from: value))
            case "member": try JSONValueEncoder().encode(try JSONValueDecoder().decode(MemberStatus.self, from: value))
            case "catalogPlugin": try JSONValueEncoder().encode(try JSONValueDecoder().decode(CatalogPlugin.self, from: value))
            case "eventRecord": try JSONValueEncoder().encode(try JSONValueDecoder().decode(EventRecord.self, from: value))
            default: nil
            }
            if let reencoded { #expect(reencoded == value, "\(definition) does not round-trip: \(reencoded)") }
        }
    }

    @Test("the control schema refuses a result of the wrong shape", arguments: [
        ("fiberStatus", #"{"fiber":"4","entry":null,"plugin":"p","state":"active","provides":[],"injects":{},"missing":[],"error":null}"#),
        ("nodeStatus", #"{"name":"a","addresses":[],"incarnation":null,"version":null,"reachable":"yes","entries":[],"fibers":[]}"#),
        ("entryChange", #"{"entry":"greeter","state":"sleeping","disabled":false,"error":null}"#),
        ("eventRecord", #"{"node":"a","time":1,"kind":"entry","detail":{"entry":"e","change":"renamed"}}"#),
        ("members", #"{"members":[{"name":"a","addresses":[],"incarnation":"i","reachable":true}]}"#),
    ])
    func controlSchemaRefusesWrongShapes(definition: String, json: String) throws {
        let problems = try Repository.schemas().problems(
            of: try JSONParser().parse(json), file: "control.schema.json", definition: definition)
        #expect(!problems.isEmpty)
    }
}

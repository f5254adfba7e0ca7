import CordisControl
import CordisJSON
import Testing
@testable import CordisConsole

/// JSON text → model → JSON text through `JSONValueDecoder` and `JSONValueEncoder`.
private func reencoded<T: Codable>(_ type: T.Type, _ text: String) throws -> String {
    let model = try JSONValueDecoder().decode(T.self, from: try JSONValue(parsing: text))
    return try JSONValueEncoder().encode(model).jsonString(.compact)
}

/// The issues `text` raises when decoded as a `T`, as `code@path`; empty when it decodes.
private func issues<T: Decodable>(_ type: T.Type, _ text: String) throws -> [String] {
    do {
        _ = try JSONValueDecoder().decode(T.self, from: try JSONValue(parsing: text))
        return []
    } catch let error as ConfigError {
        return error.issues.map { "\($0.code)@\($0.pathDescription)" }
    }
}

@Suite("Control models keep their JSON shape")
struct ControlModelCodingTests {
    // The golden texts are the shapes the hand-written conversions wrote: key order, explicit nulls,
    // `unreachable` and `waiting` only when set.

    static let reachableNode = #"{"name":"a","addresses":["unix:/run/cordis/a.sock"],"incarnation":"3f2a","version":"0.3.0","reachable":true,"entries":[{"id":"greeter","plugin":"greeter","parent":null,"disabled":false,"state":"active","error":null},{"id":"off","plugin":"counter","parent":"tools","disabled":true,"state":null,"error":null}],"fibers":[{"fiber":7,"entry":"greeter","plugin":"greeter","state":"active","provides":[],"injects":{"clock":{"node":"b","entry":"clock","fiber":3,"realm":null}},"missing":[],"error":null},{"fiber":9,"entry":null,"plugin":"remote:clock","state":"active","provides":[{"service":"clock","realm":null},{"service":"clock","realm":"eu"}],"injects":{},"missing":[],"error":null}]}"#

    static let unreachableNode = #"{"name":"c","addresses":[],"incarnation":null,"version":null,"reachable":false,"entries":[],"fibers":[],"unreachable":"the link to c was lost"}"#

    static let pendingFiber = #"{"fiber":4,"entry":"badge","plugin":"badge","state":"pending","provides":[],"injects":{"counter":null,"clock":{"node":"a","entry":null,"fiber":2,"realm":"private"}},"missing":["counter"],"waiting":{"counter":"counter@eu is in realm eu, badge injects it from the root realm"},"error":null}"#

    static let failedFiber = #"{"fiber":5,"entry":"x","plugin":"x","state":"failed","provides":[{"service":"x","realm":"lab"}],"injects":{},"missing":[],"error":"boom"}"#

    static let brokenEntry = #"{"id":"bad","plugin":"nope","parent":null,"disabled":false,"state":null,"error":"unknown plugin nope"}"#

    static let member = #"{"name":"a","addresses":["unix:/a.sock","tcp:127.0.0.1:7000"],"incarnation":"3f2a","self":true,"reachable":true}"#

    static let plugin = #"{"name":"counter","injects":["clock"],"provides":["counter"],"config":[{"path":"start","type":"Int","optional":true},{"path":"label","type":"String","optional":false}]}"#

    static let event = #"{"node":"a","time":1733000000.25,"kind":"status","detail":{"fiber":7,"entry":null,"plugin":"greeter","from":"pending","to":"active"}}"#

    @Test("a node status reads and writes back byte for byte, reachable or not")
    func nodeStatusGolden() throws {
        #expect(try reencoded(NodeStatus.self, Self.reachableNode) == Self.reachableNode)
        #expect(try reencoded(NodeStatus.self, Self.unreachableNode) == Self.unreachableNode)
    }

    @Test("an entry status writes null for a missing parent, state and error")
    func entryStatusGolden() throws {
        #expect(try reencoded(EntryStatus.self, Self.brokenEntry) == Self.brokenEntry)
    }

    @Test("an entry status carries its config as stored, after disabled, and only when the node sent one")
    func entryStatusConfig() throws {
        let configured = #"{"id":"counter","plugin":"counter","parent":null,"disabled":false,"config":{"start":{"$env":"START"},"label":"x"},"state":"active","error":null}"#
        #expect(try reencoded(EntryStatus.self, configured) == configured)
        let entry = try JSONValueDecoder().decode(EntryStatus.self, from: JSONValue(parsing: configured))
        #expect(entry.config?["start"]?["$env"] == "START")
        #expect(try JSONValueDecoder().decode(EntryStatus.self, from: JSONValue(parsing: Self.brokenEntry)).config == nil)
    }

    @Test("a fiber status keeps injects in order with null providers, and waiting only when set")
    func fiberStatusGolden() throws {
        #expect(try reencoded(FiberStatus.self, Self.pendingFiber) == Self.pendingFiber)
        #expect(try reencoded(FiberStatus.self, Self.failedFiber) == Self.failedFiber)
        let fiber = try JSONValueDecoder().decode(FiberStatus.self, from: JSONValue(parsing: Self.pendingFiber))
        #expect(fiber.injects.map(\.service) == ["counter", "clock"])
        #expect(fiber.injects[0].provider == nil)
        #expect(fiber.waiting.map(\.service) == ["counter"])
    }

    @Test("a member writes isSelf as self")
    func memberStatusGolden() throws {
        #expect(try reencoded(MemberStatus.self, Self.member) == Self.member)
    }

    @Test("a catalog plugin reads and writes back byte for byte")
    func catalogPluginGolden() throws {
        #expect(try reencoded(CatalogPlugin.self, Self.plugin) == Self.plugin)
    }

    @Test("an event record reads and writes back byte for byte, detail in its order")
    func eventRecordGolden() throws {
        #expect(try reencoded(EventRecord.self, Self.event) == Self.event)
    }

    @Test("members a model does not know are ignored at every level")
    func unknownKeysIgnored() throws {
        let node = #"{"name":"a","zone":"eu","addresses":[],"incarnation":null,"version":null,"reachable":true,"entries":[{"id":"e","plugin":"p","parent":null,"disabled":false,"state":"active","error":null,"note":1}],"fibers":[{"fiber":1,"entry":"e","plugin":"p","state":"active","provides":[{"service":"s","realm":null,"weight":2}],"injects":{"t":{"node":"b","entry":null,"fiber":2,"realm":null,"since":3}},"missing":[],"error":null,"cpu":0.5}],"extra":{"deep":[1]}}"#
        let expected = #"{"name":"a","addresses":[],"incarnation":null,"version":null,"reachable":true,"entries":[{"id":"e","plugin":"p","parent":null,"disabled":false,"state":"active","error":null}],"fibers":[{"fiber":1,"entry":"e","plugin":"p","state":"active","provides":[{"service":"s","realm":null}],"injects":{"t":{"node":"b","entry":null,"fiber":2,"realm":null}},"missing":[],"error":null}]}"#
        #expect(try reencoded(NodeStatus.self, node) == expected)
        #expect(try reencoded(MemberStatus.self, #"{"name":"a","x":true,"addresses":[],"incarnation":"i","self":false,"reachable":true}"#)
            == #"{"name":"a","addresses":[],"incarnation":"i","self":false,"reachable":true}"#)
        #expect(try reencoded(CatalogPlugin.self, #"{"name":"p","injects":[],"provides":[],"config":[{"path":"a","type":"Int","optional":false,"default":0}],"doc":"x"}"#)
            == #"{"name":"p","injects":[],"provides":[],"config":[{"path":"a","type":"Int","optional":false}]}"#)
        #expect(try reencoded(EventRecord.self, #"{"id":3,"node":"a","time":1.5,"kind":"entry","detail":{}}"#)
            == #"{"node":"a","time":1.5,"kind":"entry","detail":{}}"#)
    }

    @Test("missing members read as empty, false or null, as older nodes may leave them out")
    func missingMembersDefault() throws {
        #expect(try reencoded(NodeStatus.self, #"{"name":"a"}"#)
            == #"{"name":"a","addresses":[],"incarnation":null,"version":null,"reachable":false,"entries":[],"fibers":[]}"#)
        #expect(try reencoded(NodeStatus.self, #"{"name":"a","reachable":null,"entries":null}"#)
            == #"{"name":"a","addresses":[],"incarnation":null,"version":null,"reachable":false,"entries":[],"fibers":[]}"#)
        #expect(try reencoded(EntryStatus.self, #"{"id":"g"}"#)
            == #"{"id":"g","plugin":"group","parent":null,"disabled":false,"state":null,"error":null}"#)
        #expect(try reencoded(FiberStatus.self, #"{"fiber":1}"#)
            == #"{"fiber":1,"entry":null,"plugin":"?","state":"?","provides":[],"injects":{},"missing":[],"error":null}"#)
        #expect(try reencoded(MemberStatus.self, #"{"name":"a"}"#)
            == #"{"name":"a","addresses":[],"incarnation":"","self":false,"reachable":false}"#)
        #expect(try reencoded(CatalogPlugin.self, #"{"name":"p","config":[{"path":"a"}]}"#)
            == #"{"name":"p","injects":[],"provides":[],"config":[{"path":"a","type":"?","optional":false}]}"#)
    }

    @Test("a member of the wrong JSON type is an error that names its path")
    func wrongTypesAreErrors() throws {
        #expect(try issues(NodeStatus.self, #"{"name":"a","reachable":"yes"}"#) == ["type-mismatch@reachable"])
        #expect(try issues(NodeStatus.self, #"{"name":7}"#) == ["type-mismatch@name"])
        #expect(try issues(NodeStatus.self, #"{"name":"a","addresses":"unix:/a.sock"}"#) == ["type-mismatch@addresses"])
        #expect(try issues(NodeStatus.self, #"{"name":"a","fibers":[{"fiber":"7"}]}"#) == ["type-mismatch@fibers[0].fiber"])
        #expect(try issues(NodeStatus.self, #"{"name":"a","entries":[{"id":"e","disabled":1}]}"#) == ["type-mismatch@entries[0].disabled"])
        #expect(try issues(FiberStatus.self, #"{"fiber":1,"injects":{"clock":"b"}}"#) == ["type-mismatch@injects.clock"])
        #expect(try issues(FiberStatus.self, #"{"fiber":1,"injects":["clock"]}"#) == ["type-mismatch@injects"])
        #expect(try issues(FiberStatus.self, #"{"fiber":1,"injects":{"clock":{"fiber":2}}}"#) == ["missing-key@injects.clock.node"])
        #expect(try issues(FiberStatus.self, #"{"fiber":1,"waiting":{"clock":false}}"#) == ["type-mismatch@waiting.clock"])
        #expect(try issues(FiberStatus.self, #"{"fiber":1,"provides":[{"realm":"eu"}]}"#) == ["missing-key@provides[0].service"])
        #expect(try issues(MemberStatus.self, #"{"name":"a","self":"no"}"#) == ["type-mismatch@self"])
        #expect(try issues(CatalogPlugin.self, #"{"name":"p","config":[{"path":"a","optional":"yes"}]}"#) == ["type-mismatch@config[0].optional"])
        #expect(try issues(EventRecord.self, #"{"node":"a","time":"now","kind":"status","detail":{}}"#) == ["type-mismatch@time"])
        #expect(try issues(EventRecord.self, #"{"node":"a","time":1,"kind":"status","detail":[]}"#) == ["type-mismatch@detail"])
        #expect(try issues(EventRecord.self, #"{"node":"a","time":1,"kind":"status"}"#) == ["missing-key@detail"])
        #expect(try issues(EntryStatus.self, #"{"plugin":"p"}"#) == ["missing-key@id"])
        #expect(try issues(EntryStatus.self, #""greeter""#) == ["type-mismatch@root"])
    }

    @Test("a fiber id out of range is an error, not a trap")
    func outOfRangeNumbers() throws {
        #expect(try issues(FiberStatus.self, #"{"fiber":1e300}"#) == ["invalid-value@fiber"])
        #expect(try issues(FiberStatus.self, #"{"fiber":2.5}"#) == ["type-mismatch@fiber"])
        #expect(try issues(FiberStatus.self, #"{"fiber":1,"injects":{"c":{"node":"b","fiber":-1e19}}}"#) == ["invalid-value@injects.c.fiber"])
    }

    @Test("the console's cluster status rejects a member of the wrong type and reads the rest as before")
    func clusterStatusDecoding() throws {
        #expect(throws: ConfigError.self) {
            try ClusterStatus(json: ["nodes": [["name": "a", "fibers": [["fiber": 1, "state": 3]]]]])
        }
        let status = try ClusterStatus(json: ["nodes": [["name": "a", "reachable": true]], "note": "x"])
        #expect(status.nodes.map(\.name) == ["a"])
        #expect(try ClusterStatus(json: [:]).nodes.isEmpty)
    }
}

import CordisNode
import CordisWire
import Testing

/// The operators file: its identities and roles, the highest role of an operator matched several
/// times, and the refusal of anything else with the identity or role at fault.
@Suite("Operators file")
struct OperatorsFileTests {
    @Test("the contract's example parses and an operator gets the highest role it matches")
    func exampleParses() throws {
        let file = try OperatorsFile(parsing: Array(
            #"{"alice": "viewer", "uid:1000": "operator", "group:cordis-admins": "admin", "cluster": "admin"}"#.utf8))
        #expect(file.roles.count == 4)
        #expect(file.role(of: ["alice"]) == .viewer)
        #expect(file.role(of: ["uid:1000", "user:bob", "group:staff"]) == .operator)
        #expect(file.role(of: ["uid:1000", "group:cordis-admins"]) == .admin)
        #expect(file.role(of: ["uid:1001", "user:carol"]) == nil)
        #expect(file.role(of: []) == nil)
    }

    @Test("an unknown role, a malformed identity or a document that is not an object is refused, naming it")
    func badFilesAreRefused() {
        #expect(throws: OperatorsFileError.self) { try OperatorsFile(parsing: Array(#"{"alice": "root"}"#.utf8)) }
        #expect(throws: OperatorsFileError.self) { try OperatorsFile(parsing: Array(#"{"uid:x": "viewer"}"#.utf8)) }
        #expect(throws: OperatorsFileError.self) { try OperatorsFile(parsing: Array(#"{"a b": "viewer"}"#.utf8)) }
        #expect(throws: OperatorsFileError.self) { try OperatorsFile(parsing: Array(#"["alice"]"#.utf8)) }
        #expect(throws: OperatorsFileError.self) { try OperatorsFile(parsing: Array(#"{"alice": 1}"#.utf8)) }
        do {
            _ = try OperatorsFile(parsing: Array(#"{"alice": "root"}"#.utf8))
        } catch {
            #expect(error.problem.contains("\"alice\""))
            #expect(error.problem.contains("\"viewer\", \"operator\" or \"admin\""))
        }
    }

    @Test("a table without a file makes everyone admin; with one, an unlisted identity has no role")
    func tableDefaults() throws {
        let table = OperatorTable(nil)
        let someone = OperatorIdentity(name: "x", identities: ["uid:5"])
        #expect(table.role(of: someone) == .admin)
        table.replace(with: OperatorsFile(roles: ["uid:6": .viewer]))
        #expect(table.role(of: someone) == nil)
        #expect(table.role(of: OperatorIdentity(name: "y", identities: ["uid:6"])) == .viewer)
    }

    @Test("a commands' roles: reading is viewer, changing entries and calling is operator, forget and apply are admin")
    func commandRoles() {
        for command in ["status", "members", "catalog", "subscribe"] { #expect(OperatorRole.required(for: command) == .viewer) }
        for command in ["enable", "disable", "config", "add", "remove", "call"] {
            #expect(OperatorRole.required(for: command) == .operator)
        }
        #expect(OperatorRole.required(for: "forget") == .admin)
        #expect(OperatorRole.required(for: "apply") == .admin)
        #expect(OperatorRole.viewer < .operator && OperatorRole.operator < .admin)
    }

    @Test("a relayed request's operator travels in the request and comes back equal; a bad one is refused")
    func relayedOperatorRoundTrips() throws {
        let request = ControlRequest(
            id: 3, command: .disable, node: "b", args: ["entry": "clock"],
            operator: RequestOperator(name: "alice", identities: ["uid:1000", "user:alice", "cluster"]))
        var bytes: [UInt8] = []
        WireMessage.request(request).encode(into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""operator":{"name":"alice","identities":["uid:1000","user:alice","cluster"]}"#))
        let decoded = try WireMessage(frame: Frame(payload: bytes))
        #expect(decoded == .request(request))
        let bad = #"{"type":"request","id":1,"command":"status","args":{},"operator":{"name":"","identities":[]}}"#
        #expect(throws: WireError.self) { try WireMessage(frame: Frame(payload: Array(bad.utf8))) }
        let wrong = #"{"type":"request","id":1,"command":"status","args":{},"operator":"alice"}"#
        #expect(throws: WireError.self) { try WireMessage(frame: Frame(payload: Array(wrong.utf8))) }
    }
}

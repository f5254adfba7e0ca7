import Testing
@testable import CordisJSON

private enum Level: String, Decodable, CaseIterable { case low, high }
private enum Color: String, Decodable { case red, green }

private struct Endpoint: Decodable {
    var host: String
    var port: Int?
}

private struct PluginConfig: Decodable {
    var start: Int
    var name: String?
    var ratio: Double
    var verbose: Bool
    var tags: [String]
    var level: Level
    var endpoint: Endpoint
    var mirrors: [Endpoint]?
    var matrix: [[Int]]
    var raw: JSONValue?
}

private struct Tree: Decodable {
    var label: String
    var children: [Tree]
    var parent: Box?
    final class Box: Decodable {
        let tree: Tree
    }
}

private struct WithColor: Decodable {
    var size: Int
    var color: Color
    var after: String
}

@Suite("ConfigSchema")
struct ConfigSchemaTests {
    @Test func listsFieldsWithTypesAndOptionality() {
        let schema = ConfigSchema(of: PluginConfig.self)
        #expect(schema.isComplete)
        #expect(schema.rootType == "object")
        #expect(schema.fields.map(\.description) == [
            "start: Int", "name: String?", "ratio: Double", "verbose: Bool", "tags: [String]", "level: String",
            "endpoint: object", "endpoint.host: String", "endpoint.port: Int?", "mirrors: [object]?",
            "mirrors[].host: String", "mirrors[].port: Int?", "matrix: [[Int]]", "raw: JSON?",
        ])
    }

    @Test func stopsAtRecursiveTypes() {
        let schema = ConfigSchema(of: Tree.self)
        #expect(schema.isComplete)
        #expect(schema.fields.map(\.path).contains("children"))
        #expect(schema.fields.count < 20)
    }

    @Test func returnsWhatItGatheredWhenTheTypeRefusesPlaceholders() {
        let schema = ConfigSchema(of: WithColor.self)
        #expect(!schema.isComplete)
        #expect(schema.failure != nil)
        #expect(schema.fields.map(\.description) == ["size: Int", "color: String"])
    }

    @Test func describesScalarRoots() {
        #expect(ConfigSchema(of: Int.self).rootType == "Int")
        #expect(ConfigSchema(of: [String].self).rootType == "[String]")
        #expect(ConfigSchema(of: Int.self).fields.isEmpty)
    }
}

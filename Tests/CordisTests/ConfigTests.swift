import Testing
@testable import Cordis

/// A plugin with a nested typed config.
@CordisActor @Plugin
final class ConfiguredServer {
    struct Server: Decodable, Sendable, Equatable {
        var port: Int
    }

    struct Config: Decodable, Sendable, Equatable {
        var start: Int
        var server: Server?
    }

    func apply(_ scope: EffectScope) async throws {}
}

/// A plugin that takes no config.
@CordisActor @Plugin
final class Unconfigured {}

/// Strict JSON configs: wrong types and unknown keys are errors naming the plugin and the path.
@Suite("Config", .timeLimit(.minutes(1))) @CordisActor
struct ConfigTests {
    func configError(_ body: () throws -> Void) -> CordisError? {
        do {
            try body()
        } catch let error as CordisError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return nil
    }

    @Test func aValidJSONConfigIsDecodedIntoThePluginsConfig() async throws {
        let (root, _) = try makeRoot()
        let fiber = try root.plugin(PluginType(ConfiguredServer.self), rawConfig: ["start": 1, "server": ["port": 8080]] as JSONValue)
        try await fiber.await()
        #expect(fiber.state == .active)
        #expect((fiber.plugin as? ConfiguredServer)?.config == .init(start: 1, server: .init(port: 8080)))
    }

    @Test func aWrongTypeIsAnInvalidConfigErrorNamingThePluginAndThePath() async throws {
        let (root, _) = try makeRoot()
        let error = configError { try root.plugin(PluginType(ConfiguredServer.self), rawConfig: ["start": "one"] as JSONValue) }
        #expect(error?.code == .invalidConfig)
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains("invalid config:"))
        #expect(text.contains("ConfiguredServer"))
        #expect(text.contains("\n  - "))
        #expect(text.contains("(at start)"))
        #expect(root.fibers.count == 1)
    }

    @Test func anUnknownKeyIsAnInvalidConfigErrorNamingItsPath() async throws {
        let (root, _) = try makeRoot()
        let error = configError {
            try root.plugin(PluginType(ConfiguredServer.self), rawConfig: ["start": 1, "strat": 2, "server": ["port": 1, "host": "x"]] as JSONValue)
        }
        let lines = error?.message.split(separator: "\n").map(String.init) ?? []
        #expect(lines.first?.contains("invalid config:") == true)
        #expect(lines.first?.contains("ConfiguredServer") == true)
        #expect(lines.contains { $0.hasPrefix("  - ") && $0.hasSuffix("(at strat)") })
        #expect(lines.contains { $0.hasPrefix("  - ") && $0.hasSuffix("(at server.host)") })
    }

    @Test func aNestedWrongTypeNamesTheNestedPath() async throws {
        let (root, _) = try makeRoot()
        let error = configError { try root.plugin(PluginType(ConfiguredServer.self), rawConfig: ["start": 1, "server": ["port": true]] as JSONValue) }
        #expect(error?.message.contains("(at server.port)") == true)
    }

    @Test func aPluginWithoutConfigRefusesUnknownKeysAndTakesAnEmptyObject() async throws {
        let (root, _) = try makeRoot()
        try await root.plugin(PluginType(Unconfigured.self), rawConfig: [:] as JSONValue).await()
        try await root.plugin(PluginType(Unconfigured.self), rawConfig: JSONValue.null).await()
        let error = configError { try root.plugin(PluginType(Unconfigured.self), rawConfig: ["extra": 1] as JSONValue) }
        #expect(error?.message.contains("invalid config:") == true)
        #expect(error?.message.contains("(at extra)") == true)
    }

    @Test func aPluginWhoseConfigNeedsFieldsCannotStartWithTheDefault() async throws {
        let (root, _) = try makeRoot()
        let error = configError { try root.plugin(ConfiguredServer.self) }
        #expect(error?.code == .invalidConfig)
        #expect(error?.message.contains("(at start)") == true)
    }

    @Test func anInvalidJSONUpdateThrowsAndChangesNothingAValidOneRestarts() async throws {
        let (root, _) = try makeRoot()
        let fiber = try root.plugin(PluginType(ConfiguredServer.self), rawConfig: ["start": 1] as JSONValue)
        try await fiber.await()
        let first = fiber.plugin
        let error = await #expect(throws: CordisError.self) { try await fiber.update(["start": "two"] as JSONValue) }
        #expect(error?.message.contains("(at start)") == true)
        #expect(fiber.state == .active)
        #expect(fiber.plugin === first)
        #expect(fiber.config as? ConfiguredServer.Config == .init(start: 1))
        try await fiber.update(["start": 2] as JSONValue)
        #expect(fiber.plugin !== first)
        #expect((fiber.plugin as? ConfiguredServer)?.config == .init(start: 2))
    }
}

import CordisJSON
import Foundation
import Testing
@testable import Cordis

/// A plugin config with a secret and a host, as an operator keeps them out of the entries file.
struct ServerConfig: Codable, Sendable, Equatable {
    var token: String
    var host: String
    var port: Int
}

/// Configs that reference environment variables: `{"$env": "NAME"}`, with an optional default.
@Suite("Environment values in configs", .timeLimit(.minutes(1))) @CordisActor
struct ConfigEnvironmentTests {
    static let environment = ConfigEnvironment { name in
        ["SERVER_TOKEN": "s3cret", "SERVER_HOST": "db.internal"][name]
    }

    static func catalog(seen: Trail) -> PluginCatalog {
        var catalog = PluginCatalog()
        catalog.register(FunctionPlugin<ServerConfig>(name: "server") { _, config, _ in
            seen.add("\(config.token) \(config.host) \(config.port)")
        }, as: "server")
        return catalog
    }

    static let entriesFile = """
        { "version": 1, "entries": [
          { "id": "server", "plugin": "server", "config": {
              "token": { "$env": "SERVER_TOKEN" },
              "host": { "$env": "SERVER_HOST", "default": "localhost" },
              "port": { "$env": "SERVER_PORT", "default": 5432 } } } ] }
        """

    @Test func theFiberGetsTheValuesAndTheSavedFileKeepsTheReferences() async throws {
        let folder = try LoaderFolder()
        try folder.write(Self.entriesFile)
        let seen = Trail()
        let (root, _) = try makeRoot()
        let loader = Loader(
            ctx: root, catalog: Self.catalog(seen: seen), store: FileEntryStore(url: folder.entries),
            environment: Self.environment)
        try await loader.start()
        #expect(seen.entries == ["s3cret db.internal 5432"])
        #expect(loader.fiber(for: "server")?.config as? ServerConfig == ServerConfig(token: "s3cret", host: "db.internal", port: 5432))

        // A change saves the tree: the references stay, the values never reach the file.
        try await loader.setDisabled(id: "server", true)
        try await loader.setDisabled(id: "server", false)
        let saved = try folder.text()
        #expect(!saved.contains("s3cret"))
        #expect(!saved.contains("db.internal"))
        #expect(saved.contains("\"$env\""))
        #expect(saved.contains("SERVER_TOKEN"))
        let token = try FileEntryStore(url: folder.entries).load().entry(id: "server")?.config?["token"]
        #expect(token == .object(["$env": "SERVER_TOKEN"]))
        #expect(loader.entry(id: "server")?.config?["token"] == .object(["$env": "SERVER_TOKEN"]))
        #expect(seen.entries == ["s3cret db.internal 5432", "s3cret db.internal 5432"])
    }

    @Test func anUnsetVariableWithoutADefaultRejectsTheChangeNamingThePath() async throws {
        let store = InMemoryEntryStore()
        let seen = Trail()
        let (root, _) = try makeRoot()
        let loader = Loader(
            ctx: root, catalog: Self.catalog(seen: seen), store: store, environment: Self.environment)
        try await loader.start()
        let config: JSONValue = [
            "token": ["$env": "MISSING_TOKEN"], "host": "h", "port": 1,
        ]
        await #expect(throws: LoaderError(
            .invalidConfig, entryID: "server",
            "entry \"server\": invalid config:\n"
                + "  - environment variable \"MISSING_TOKEN\" is not set and the reference has no default (at token)")
        ) {
            try await loader.add(Entry(id: "server", plugin: "server", config: config))
        }
        #expect(loader.entries.isEmpty)
        #expect(try store.load().entries.isEmpty)
        #expect(seen.entries.isEmpty)

        // The same on an update of a running entry: nothing changes.
        try await loader.add(Entry(id: "server", plugin: "server", config: ["token": "t", "host": "h", "port": 1]))
        await #expect(throws: LoaderError.self) {
            try await loader.update(id: "server", config: config)
        }
        #expect(loader.entry(id: "server")?.config?["token"] == "t")
        #expect(seen.entries == ["t h 1"])
    }

    @Test func malformedReferencesAreConfigErrorsAtTheirPaths() throws {
        let environment = Self.environment
        let config: JSONValue = [
            "a": ["$env": 3],
            "b": ["list": [["$env": "SERVER_TOKEN", "fallback": "x"]]],
            "c": ["$env": ""],
            "d": ["$env": "A=B"],
        ]
        #expect(throws: ConfigError(issues: [
            ConfigError.Issue(code: .invalidValue, path: [.key("a")], message:
                "\"$env\" takes the name of an environment variable (a non-empty string without \"=\")"),
            ConfigError.Issue(code: .invalidValue, path: [.key("b"), .key("list"), .index(0)], message:
                "an environment reference takes only \"$env\" and \"default\", not \"fallback\""),
            ConfigError.Issue(code: .invalidValue, path: [.key("c")], message:
                "\"$env\" takes the name of an environment variable (a non-empty string without \"=\")"),
            ConfigError.Issue(code: .invalidValue, path: [.key("d")], message:
                "\"$env\" takes the name of an environment variable (a non-empty string without \"=\")"),
        ])) {
            try environment.resolve(config)
        }
    }

    @Test func valuesAreStringsAndDefaultsAnyJSONAndOtherObjectsAreLeftAlone() throws {
        let resolved = try Self.environment.resolve([
            "token": ["$env": "SERVER_TOKEN", "default": 1],
            "limits": ["$env": "NOT_SET", "default": ["max": 3]],
            "plain": ["env": "SERVER_TOKEN"],
            "list": [["$env": "SERVER_HOST"], 2],
        ])
        #expect(resolved == [
            "token": "s3cret", "limits": ["max": 3], "plain": ["env": "SERVER_TOKEN"], "list": ["db.internal", 2],
        ])
    }

    @Test func theProcessEnvironmentIsTheDefault() throws {
        setenv("CORDIS_CONFIG_ENV_TEST", "from-process", 1)
        defer { unsetenv("CORDIS_CONFIG_ENV_TEST") }
        #expect(try ConfigEnvironment.process.resolve(["$env": "CORDIS_CONFIG_ENV_TEST"]) == "from-process")
    }
}

import CordisJSON
import Foundation
import Testing
@testable import Cordis

/// What the namer service reads for the plugins that call it.
enum NamerIntercept: InterceptKey {
    struct Config: Codable, Sendable, Equatable {
        var prefix: String
    }

    static let name = "namer"
}

/// A service that names things after the intercept of its caller's context.
@CordisActor
final class Namer {
    func name(for ctx: Context) -> String {
        (ctx.interceptConfig(NamerIntercept.self)?.prefix ?? "none") + "/" + ctx.fiber.name
    }
}

enum NamerKey: ServiceKey {
    typealias Value = Namer
    static let name = "namer"
}

/// Intercepts (`ctx.intercept`) and the Loader entry fields `inject` and `intercept`.
@Suite("Intercepts and entry inject", .timeLimit(.minutes(1))) @CordisActor
struct InterceptTests {
    @Test func aServiceReadsTheNearestInterceptOfItsCallersContext() async throws {
        let (root, _) = try makeRoot()
        let namer = Namer()
        try root.provide(NamerKey.self, namer)
        let names = Trail()
        let outer = root.intercept(NamerIntercept.self, .init(prefix: "outer"))
        try outer.plugin(FunctionPlugin<NoConfig>(name: "parent") { _, _, scope in
            names.add(namer.name(for: scope.ctx))
            // Children inherit it; a nearer intercept replaces it for its subtree only.
            try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, scope in names.add(namer.name(for: scope.ctx)) })
            try scope.ctx.intercept(NamerIntercept.self, .init(prefix: "inner")).plugin(FunctionPlugin<NoConfig>(name: "nested") { _, _, scope in
                names.add(namer.name(for: scope.ctx))
            })
        })
        try root.plugin(FunctionPlugin<NoConfig>(name: "plain") { _, _, scope in names.add(namer.name(for: scope.ctx)) })
        await root.settled()
        #expect(names.entries.sorted() == ["none/plain", "outer/child", "outer/parent", "inner/nested"].sorted())
        // Isolating keeps the intercepts.
        #expect(outer.isolate("clock").interceptConfig(NamerIntercept.self) == .init(prefix: "outer"))
        #expect(root.interceptConfig(NamerIntercept.self) == nil)
    }

    @Test func aJSONInterceptThatDoesNotDecodeIsAnErrorNamingThePluginAndPath() async throws {
        let (root, logs) = try makeRoot()
        let fiber = try root.intercept(name: "namer", ["prefix": 3]).plugin(FunctionPlugin<NoConfig>(name: "reader") { _, _, _ in })
        try await fiber.await()
        #expect(throws: CordisError(
            .invalidConfig,
            "plugin \"reader (intercept \"namer\")\": invalid config:\n  - expected string, got integer (at prefix)")
        ) {
            try fiber.ctx.intercepted(NamerIntercept.self)
        }
        #expect(fiber.ctx.interceptConfig(NamerIntercept.self) == nil)
        #expect(logs.at(.error).contains { $0.text.contains("(at prefix)") })
    }

    static func catalog(names: Trail) -> PluginCatalog {
        var catalog = PluginCatalog()
        catalog.register(
            FunctionPlugin<NoConfig>(name: "namer", provides: [NamerKey.self]) { ctx, _, _ in
                try ctx.provide(NamerKey.self, Namer())
            }, as: "namer")
        catalog.register(
            FunctionPlugin<NoConfig>(name: "reader") { _, _, scope in
                let namer = try? scope.ctx.get(NamerKey.self, property: "namer")
                names.add(namer?.name(for: scope.ctx) ?? "no namer/\(scope.ctx.fiber.name)")
            }, as: "reader")
        return catalog
    }

    @Test func entryFieldsInjectAndInterceptAreReadSavedAndApplied() async throws {
        let folder = try LoaderFolder()
        try folder.write("""
            { "version": 1, "entries": [
              { "id": "reader", "plugin": "reader", "inject": ["namer"],
                "intercept": { "namer": { "prefix": "top" } }, "x-note": "kept" },
              { "id": "team", "plugin": "group", "intercept": { "namer": { "prefix": "team" } }, "children": [
                { "id": "member", "plugin": "reader", "inject": { "namer": { "required": true } } },
                { "id": "lead", "plugin": "reader", "inject": ["namer"], "intercept": { "namer": { "prefix": "lead" } } },
                { "id": "loose", "plugin": "reader", "inject": { "namer": { "required": false } } } ] } ] }
            """)
        let names = Trail()
        let (root, _) = try makeRoot()
        let loader = Loader(ctx: root, catalog: Self.catalog(names: names), store: FileEntryStore(url: folder.entries))
        try await loader.start()
        // Required injects hold the entries pending; the optional one runs without the service.
        #expect(loader.fiber(for: "reader")?.state == .pending)
        #expect(loader.fiber(for: "member")?.state == .pending)
        #expect(loader.fiber(for: "loose")?.state == .active)
        #expect(loader.status.first { $0.id == "reader" }?.waiting == "waits for namer")
        #expect(names.entries == ["no namer/reader"])

        names.reset()
        try await loader.add(Entry(id: "namer", plugin: "namer"))
        #expect(loader.fiber(for: "reader")?.state == .active)
        #expect(names.entries.sorted() == ["lead/reader", "team/reader", "team/reader", "top/reader"])

        // Saved as read, unknown fields kept.
        let saved: EntryTree = try FileEntryStore(url: folder.entries).load()
        #expect(saved.entry(id: "reader")?.inject == [Dependency(name: "namer")])
        #expect(saved.entry(id: "loose")?.inject == [Dependency(name: "namer", optional: true)])
        #expect(saved.entry(id: "team")?.intercept == ["namer": ["prefix": "team"]])
        #expect(saved.entry(id: "reader")?.extra["x-note"] == "kept")
        let text = try folder.text()
        #expect(text.contains("\"inject\""))
        #expect(text.contains("\"required\": false") || text.contains("\"required\":false"))

        // A new intercept on the group restarts the fibers under it whose intercept changes.
        names.reset()
        try await loader.update(id: "team", intercept: ["namer": ["prefix": "crew"]])
        #expect(names.entries.sorted() == ["crew/reader", "crew/reader"])
        // A new inject list restarts the entry with it.
        names.reset()
        try await loader.update(id: "reader", inject: [])
        // Without the inject, the namer (a sibling's service) is not its to read.
        #expect(names.entries == ["no namer/reader"])
        #expect(try FileEntryStore(url: folder.entries).load().entry(id: "reader")?.inject == [])
    }

    @Test func badInjectAndInterceptFieldsAreRefused() async throws {
        let cases: [(String, String)] = [
            (#"{"id": "g", "plugin": "group", "inject": ["namer"], "children": []}"#,
             #"entry "g": a group takes no "inject": list the services on the entries that need them"#),
            (#"{"id": "a", "plugin": "reader", "inject": [3]}"#, #"entry "a": field "inject" must list non-empty service names"#),
            (#"{"id": "a", "plugin": "reader", "inject": ["x", "x"]}"#, #"entry "a": field "inject" names a service twice"#),
            (#"{"id": "a", "plugin": "reader", "inject": {"x": {"required": "yes"}}}"#,
             #"entry "a": inject "x": "required" must be a boolean"#),
            (#"{"id": "a", "plugin": "reader", "inject": {"x": true}}"#,
             #"entry "a": inject "x" must be an object with at most a boolean "required""#),
            (#"{"id": "a", "plugin": "reader", "inject": "x"}"#,
             #"entry "a": field "inject" must be an array of service names or an object"#),
            (#"{"id": "a", "plugin": "reader", "intercept": []}"#,
             #"entry "a": field "intercept" must be an object of service name to config"#),
        ]
        for (json, message) in cases {
            #expect(throws: EntryError.self) { try Entry(json: JSONParser().parse(Array(json.utf8))) }
            do {
                _ = try Entry(json: JSONParser().parse(Array(json.utf8)))
            } catch let error as EntryError {
                #expect(error.message == message)
            }
        }

        let names = Trail()
        let (root, _) = try makeRoot()
        let store = InMemoryEntryStore(EntryTree(entries: [Entry(id: "team", children: [])]))
        let loader = Loader(ctx: root, catalog: Self.catalog(names: names), store: store)
        try await loader.start()
        await #expect(throws: LoaderError(
            .invalidEntry, entryID: "team",
            "entry \"team\": a group takes no \"inject\": list the services on the entries that need them")
        ) {
            try await loader.update(id: "team", inject: [Dependency(name: "namer")])
        }
        #expect(try store.load().entry(id: "team")?.inject == [])
        // The same through a whole-tree change (cordis-ios's reconcile).
        await #expect(throws: LoaderError(
            .invalidEntry, entryID: "team",
            "entry \"team\": a group takes no \"inject\": list the services on the entries that need them")
        ) {
            try await loader.reconcile([Entry(id: "team", children: [], inject: [Dependency(name: "namer")])])
        }
        try await loader.reconcile([Entry(id: "solo", plugin: "reader")])
        #expect(loader.entry("solo")?.plugin == "reader")
        #expect(loader.entry("team") == nil)
        #expect(names.entries == ["no namer/reader"])
    }
}

import Cordis
import Testing

/// A service that, once provided, emits `CustomEvent` to the listeners of its own realm only.
@CordisActor
final class IsolatedEmitter: ServicePlugin {
    typealias Key = IsolatedEmitterKey
    let ctx: Context

    init(ctx: Context, config: NoConfig) {
        self.ctx = ctx
    }

    func setup(_ scope: EffectScope) async throws {
        try ctx.emit(scope: eventScope, CustomEvent.self)
    }
}

enum IsolatedEmitterKey: ServiceKey {
    typealias Value = IsolatedEmitter
    static let name = "foo"
}

/// Ports cordis-ios's `Tests/CordisTests/IsolateTests.swift`: contexts isolated into private or shared
/// realms see only the providers (and the scoped events) of their realm.
@Suite("IsolateTests")
@CordisActor
struct IsolateTests {
    /// A consumer of `foo` that counts its loads and its unloads.
    private func consumer(_ loaded: Recorder<Void>, _ unloaded: Recorder<Void>) -> FunctionPlugin<NoConfig> {
        functionPlugin(inject: [Foo.self]) { _, _, scope in
            loaded.record(())
            try scope.collect { unloaded.record(()) }
        }
    }

    /// Ports cordis-ios IsolateTests "isolated context".
    @Test("isolated context")
    func eachPrivateRealmSeesOnlyItsOwnProvider() async throws {
        let root = Context()
        let loaded = Recorder<Void>()
        let unloaded = Recorder<Void>()
        let consumerPlugin = consumer(loaded, unloaded)

        try await root.plugin(consumerPlugin).await()
        let ctx1 = root.isolate(Foo.self)
        let fiber1 = try await ctx1.plugin(consumerPlugin).await()
        let ctx2 = root.isolate(Foo.self)
        try await ctx2.plugin(consumerPlugin).await()

        let rootProvider = try root.provide(Foo.self, Payload(bar: 100))
        #expect(root.get(Foo.self, strict: false) == Payload(bar: 100))
        #expect(ctx1.get(Foo.self, strict: false) == nil)
        #expect(ctx2.get(Foo.self, strict: false) == nil)
        try await quiescence(of: root)
        #expect(loaded.count == 1)
        #expect(unloaded.count == 0)

        try ctx1.provide(Foo.self, Payload(bar: 200))
        #expect(root.get(Foo.self, strict: false) == Payload(bar: 100))
        #expect(ctx1.get(Foo.self, strict: false) == Payload(bar: 200))
        #expect(ctx2.get(Foo.self, strict: false) == nil)
        try await quiescence(of: root)
        #expect(loaded.count == 2)
        #expect(unloaded.count == 0)

        try await rootProvider.dispose()
        #expect(root.get(Foo.self, strict: false) == nil)
        #expect(ctx1.get(Foo.self, strict: false) == Payload(bar: 200))
        #expect(ctx2.get(Foo.self, strict: false) == nil)
        expectError("cannot get property \"foo\" without inject") { _ = try root[Foo.self] }
        #expect(fiber1.state == .active)
        #expect(try fiber1.ctx[Foo.self] == Payload(bar: 200))
        try await quiescence(of: root)
        #expect(loaded.count == 2)
        #expect(unloaded.count == 1)

        try ctx2.provide(Foo.self, Payload(bar: 300))
        #expect(root.get(Foo.self, strict: false) == nil)
        #expect(ctx1.get(Foo.self, strict: false) == Payload(bar: 200))
        #expect(ctx2.get(Foo.self, strict: false) == Payload(bar: 300))
        try await quiescence(of: root)
        #expect(loaded.count == 3)
        #expect(unloaded.count == 1)
    }

    /// Ports cordis-ios IsolateTests "shared label".
    @Test("shared label")
    func contextsIsolatedIntoOneRealmShareItsProvider() async throws {
        let root = Context()
        let loaded = Recorder<Void>()
        let unloaded = Recorder<Void>()
        let consumerPlugin = consumer(loaded, unloaded)

        let shared = root.makeRealm(name: "test")
        try await root.plugin(consumerPlugin).await()
        let ctx1 = root.isolate(Foo.self, realm: shared)
        try await ctx1.plugin(consumerPlugin).await()
        let ctx2 = root.isolate(Foo.self, realm: shared)
        try await ctx2.plugin(consumerPlugin).await()
        try await quiescence(of: root)
        #expect(loaded.count == 0)

        try root.provide(Foo.self, Payload(bar: 100))
        #expect(root.get(Foo.self, strict: false) == Payload(bar: 100))
        #expect(ctx1.get(Foo.self, strict: false) == nil)
        #expect(ctx2.get(Foo.self, strict: false) == nil)
        try await quiescence(of: root)
        #expect(loaded.count == 1)
        #expect(unloaded.count == 0)

        let sharedProvider = try ctx1.provide(Foo.self, Payload(bar: 200))
        #expect(root.get(Foo.self, strict: false) == Payload(bar: 100))
        #expect(ctx1.get(Foo.self, strict: false) == Payload(bar: 200))
        #expect(ctx2.get(Foo.self, strict: false) == Payload(bar: 200))
        try await quiescence(of: root)
        #expect(loaded.count == 3)
        #expect(unloaded.count == 0)

        try await sharedProvider.dispose()
        #expect(root.get(Foo.self, strict: false) == Payload(bar: 100))
        #expect(ctx1.get(Foo.self, strict: false) == nil)
        #expect(ctx2.get(Foo.self, strict: false) == nil)
        try await quiescence(of: root)
        #expect(loaded.count == 3)
        #expect(unloaded.count == 2)
    }

    /// Ports cordis-ios IsolateTests "isolated event".
    @Test("isolated event")
    func aServiceEventReachesOnlyTheListenersOfItsRealm() async throws {
        let root = Context()
        let isolated = root.isolate(IsolatedEmitterKey.self)
        let outside = Recorder<Void>()
        let inside = Recorder<Void>()
        try root.on(CustomEvent.self) { _ in outside.record(()) }
        try isolated.on(CustomEvent.self) { _ in inside.record(()) }

        try await isolated.plugin(IsolatedEmitter.self).await()
        #expect(outside.count == 0)
        #expect(inside.count == 1)
    }
}

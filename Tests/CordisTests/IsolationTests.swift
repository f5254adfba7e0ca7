import Testing
@testable import Cordis

/// cordis `isolate.spec.ts` (describe `Isolation`).
@Suite("Isolation", .timeLimit(.minutes(1))) @CordisActor
struct IsolationTests {
    /// Plugs a consumer of `foo` that counts its loads and unloads.
    func consumer(on ctx: Context, applied: Counter, disposed: Counter) throws {
        try ctx.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [FooKey.self]) { _, _, scope in
            applied.hit()
            try scope.collect { disposed.hit() }
        })
    }

    func value(_ ctx: Context) -> Int? {
        guard ctx.has(FooKey.self) else { return nil }
        return (try? ctx[FooKey.self])?.value
    }

    @Test func eachIsolatedContextHasAPrivateRealm() async throws {
        let (root, _) = try makeRoot()
        let applied = Counter(), disposed = Counter()
        let ctx1 = root.isolate("foo"), ctx2 = root.isolate("foo")
        #expect(ctx1.realm(for: "foo") != ctx2.realm(for: "foo"))
        for ctx in [root, ctx1, ctx2] { try consumer(on: ctx, applied: applied, disposed: disposed) }

        let rootProvider = try root.provide(FooKey.self, Box(100))
        #expect(value(root) == 100)
        #expect(value(ctx1) == nil && value(ctx2) == nil)
        await root.settled()
        #expect(applied.value == 1 && disposed.value == 0)

        try ctx1.provide(FooKey.self, Box(200))
        #expect(value(root) == 100 && value(ctx1) == 200 && value(ctx2) == nil)
        await root.settled()
        #expect(applied.value == 2 && disposed.value == 0)

        try await rootProvider.dispose()
        #expect(value(root) == nil && value(ctx1) == 200)
        await root.settled()
        #expect(applied.value == 2 && disposed.value == 1)

        try ctx2.provide(FooKey.self, Box(300))
        #expect(value(root) == nil && value(ctx1) == 200 && value(ctx2) == 300)
        await root.settled()
        #expect(applied.value == 3 && disposed.value == 1)
    }

    @Test func contextsIsolatedWithTheSameLabelShareARealm() async throws {
        let (root, _) = try makeRoot()
        let applied = Counter(), disposed = Counter()
        let ctx1 = root.isolate("foo", realm: .label("test")), ctx2 = root.isolate("foo", realm: .label("test"))
        for ctx in [root, ctx1, ctx2] { try consumer(on: ctx, applied: applied, disposed: disposed) }
        await root.settled()
        #expect(applied.value == 0)

        try root.provide(FooKey.self, Box(100))
        #expect(value(root) == 100 && value(ctx1) == nil && value(ctx2) == nil)
        await root.settled()
        #expect(applied.value == 1)

        let shared = try ctx1.provide(FooKey.self, Box(200))
        #expect(value(ctx1) == 200 && value(ctx2) == 200)
        await root.settled()
        #expect(applied.value == 3 && disposed.value == 0)

        try await shared.dispose()
        #expect(value(root) == 100 && value(ctx1) == nil && value(ctx2) == nil)
        await root.settled()
        #expect(applied.value == 3 && disposed.value == 2)
    }

    @Test func aSecondProviderInAnotherRealmIsNoDuplicate() async throws {
        let (root, _) = try makeRoot()
        try root.provide(FooKey.self, Box(1))
        try root.isolate("foo").provide(FooKey.self, Box(2))
        #expect(throws: CordisError.self) { try root.provide(FooKey.self, Box(3)) }
        #expect(root.allProviderRecords.count == 2)
    }

    @Test func aServiceScopedEventReachesOnlyListenersInTheServicesRealm() async throws {
        let (root, _) = try makeRoot()
        let ctx = root.isolate("foo")
        let outer = Counter(), inner = Counter()
        try root.on(CustomEvent.self) { outer.hit() }
        try ctx.on(CustomEvent.self) { inner.hit() }
        let service = try ctx.plugin(FunctionPlugin<NoConfig>(name: "foo") { _, _, scope in
            try scope.ctx.provide(FooKey.self, Box(1))
            try scope.ctx.emit(scope: IsolationScope(ctx: scope.ctx, name: FooKey.name), CustomEvent.self)
        })
        try await service.await()
        #expect(outer.value == 0)
        #expect(inner.value == 1)
    }

    @Test func isolatingInTheRootRealmUndoesAnIsolation() async throws {
        let (root, _) = try makeRoot()
        let isolated = root.isolate("foo", realm: .label("blue"))
        let back = isolated.isolate("foo", realm: .root)
        #expect(isolated.realm(for: "foo") == .label("blue"))
        #expect(back.realm(for: "foo") == .root)
        #expect(root.realm(for: "bar") == .root)
    }
}

import Testing
@testable import Cordis

/// Fallback providers (`ctx.provide(name:value:fallbackRank:)`), the building block of remote proxies
/// (a local provider wins; otherwise the node whose name sorts first).
@Suite("Fallback providers", .timeLimit(.minutes(1))) @CordisActor
struct FallbackProviderTests {
    /// Plugs a provider of `foo` with `value`, a fallback when `rank` is given.
    @discardableResult
    func provider(_ root: Context, _ value: Int, rank: String? = nil) async throws -> Fiber {
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: rank.map { "proxy-\($0)" } ?? "local") { _, _, scope in
            try scope.ctx.provide(name: "foo", value: Box(value), fallbackRank: rank)
        })
        try await fiber.await()
        return fiber
    }

    /// A consumer of `foo` recording what it loads and unloads.
    func consumer(_ root: Context, _ trail: Trail) throws -> Fiber {
        try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [FooKey.self]) { _, _, scope in
            let foo = try scope.ctx[FooKey.self]
            trail.add("load \(foo.value)")
            try scope.collect { trail.add("unload \(foo.value)") }
        })
    }

    func current(_ root: Context) -> Int? {
        (root.currentProvider(of: "foo")?.value as? Box)?.value
    }

    @Test func aFallbackIsNeverADuplicate() async throws {
        let (root, _) = try makeRoot()
        try await provider(root, 1)
        try await provider(root, 2, rank: "a")
        try await provider(root, 3, rank: "a")
        try root.provide(name: "foo", value: Box(4), fallbackRank: "b")
        #expect(root.allProviderRecords.count == 4)
        #expect(current(root) == 1)
    }

    @Test func aFallbackServesOnlyWhileNoOrdinaryProviderDoes() async throws {
        let (root, _) = try makeRoot()
        let local = try await provider(root, 1)
        try await provider(root, 2, rank: "a")
        #expect(current(root) == 1)
        try await local.dispose()
        #expect(current(root) == 2)
    }

    @Test func theLowestRankIsChosenFirst() async throws {
        let (root, _) = try makeRoot()
        try root.plugin(FunctionPlugin<NoConfig>(name: "both") { _, _, scope in
            try scope.ctx.provide(name: "foo", value: Box(2), fallbackRank: "node-b")
            try scope.ctx.provide(name: "foo", value: Box(1), fallbackRank: "node-a")
        })
        await root.settled()
        #expect(current(root) == 1)

        let (other, _) = try makeRoot()
        let first = try await provider(other, 3, rank: "node-c")
        try await provider(other, 2, rank: "node-b")
        try await provider(other, 1, rank: "node-a")
        #expect(current(other) == 3)
        try await first.dispose()
        #expect(current(other) == 1)
    }

    @Test func consumersStayWithTheirFallbackUntilItLeavesThenMoveToTheNext() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try consumer(root, trail)
        let b = try await provider(root, 2, rank: "b")
        try await fiber.await()
        try await provider(root, 1, rank: "a")
        await root.settled()
        #expect(current(root) == 2)
        #expect(trail.entries == ["load 2"])
        try await b.dispose()
        await root.settled()
        #expect(current(root) == 1)
        #expect(trail.entries == ["load 2", "unload 2", "load 1"])
        #expect(fiber.state == .active)
    }

    @Test func aLocalProviderArrivingMovesConsumersToItWithOneReload() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try consumer(root, trail)
        try await provider(root, 2, rank: "a")
        await root.settled()
        #expect(trail.entries == ["load 2"])
        let local = try await provider(root, 1)
        await root.settled()
        #expect(current(root) == 1)
        #expect(trail.entries == ["load 2", "unload 2", "load 1"])
        #expect(fiber.providerRecords["foo"]?.fiber === local)
        try await local.dispose()
        await root.settled()
        #expect(trail.entries == ["load 2", "unload 2", "load 1", "unload 1", "load 2"])
    }

    @Test func consumersArePendingOnlyWhenNoProviderRemains() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try consumer(root, trail)
        let a = try await provider(root, 1, rank: "a")
        let b = try await provider(root, 2, rank: "b")
        await root.settled()
        try await a.dispose()
        await root.settled()
        #expect(fiber.state == .active)
        try await b.dispose()
        await root.settled()
        #expect(fiber.state == .pending)
        #expect(fiber.missingInjections == ["foo"])
    }
}

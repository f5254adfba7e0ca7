import Testing
@testable import Cordis

enum PendingServiceKey: ServiceKey {
    typealias Value = PendingService
    static let name = "pending-foo"
}

/// A service whose `apply` waits for `custom-event` before it returns (cordis's async `Service.init`).
@CordisActor @Service(PendingServiceKey.self)
final class PendingService {
    func apply(_ scope: EffectScope) async throws {
        let ctx = self.ctx
        await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
            do {
                try ctx.once(CustomEvent.self) { resume.resume() }
            } catch {
                resume.resume()
            }
        }
    }
}

enum ChainFooKey: ServiceKey {
    typealias Value = ChainFoo
    static let name = "chain-foo"
}

enum ChainBarKey: ServiceKey {
    typealias Value = ChainBar
    static let name = "chain-bar"
}

enum ChainQuxKey: ServiceKey {
    typealias Value = ChainQux
    static let name = "chain-qux"
}

/// Inits per service, for the "multiple injects" case (used by one test only).
@CordisActor
enum ChainInits {
    static var counts: [String: Int] = [:]
}

@CordisActor @Service(ChainFooKey.self)
final class ChainFoo {
    @Inject(ChainQuxKey.self) var qux: ChainQux
    func apply(_ scope: EffectScope) async throws {
        _ = try qux
        ChainInits.counts["foo", default: 0] += 1
    }
}

@CordisActor @Service(ChainBarKey.self)
final class ChainBar {
    @Inject(ChainFooKey.self) var foo: ChainFoo
    @Inject(ChainQuxKey.self) var qux: ChainQux
    func apply(_ scope: EffectScope) async throws {
        _ = try foo
        _ = try qux
        ChainInits.counts["bar", default: 0] += 1
    }
}

@CordisActor @Service(ChainQuxKey.self)
final class ChainQux {
    func apply(_ scope: EffectScope) async throws {
        ChainInits.counts["qux", default: 0] += 1
    }
}

enum SelfInjectingKey: ServiceKey {
    typealias Value = SelfInjecting
    static let name = "self-injecting"
}

/// cordis's `Test` service whose constructor does `ctx.inject(['test'], () => {})`.
@CordisActor @Service(SelfInjectingKey.self)
final class SelfInjecting {
    func apply(_ scope: EffectScope) async throws {
        try ctx.inject([SelfInjectingKey.self]) { ctx, _ in
            try ctx.on(CustomEvent.self) {}
        }
    }
}

enum StandaloneKey: ServiceKey {
    typealias Value = Standalone
    static let name = "standalone"
}

@CordisActor @Service(StandaloneKey.self)
final class Standalone {}

/// cordis `service.spec.ts` (describe `Service`).
@Suite("Service", .timeLimit(.minutes(1))) @CordisActor
struct ServiceTests {
    @Test func aConsumerWaitsWhileItsProvidersApplyIsPending() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        let consumer = try root.inject([PendingServiceKey.self]) { _, _ in calls.hit() }
        try await consumer.await()
        #expect(calls.value == 0)
        let provider = try root.plugin(PendingService.self)
        #expect(await eventually { root.listenerCounts["custom-event"] == 1 })
        #expect(provider.state == .loading)
        #expect(consumer.state == .pending)
        #expect(calls.value == 0)
        try root.emit(CustomEvent.self)
        await root.settled()
        #expect(provider.state == .active)
        #expect(consumer.state == .active)
        #expect(calls.value == 1)
    }

    @Test func servicesInjectingEachOtherAreEachAppliedExactlyOnce() async throws {
        let (root, _) = try makeRoot()
        ChainInits.counts = [:]
        let foo = try root.plugin(ChainFoo.self)
        let bar = try root.plugin(ChainBar.self)
        try await foo.await()
        try await bar.await()
        #expect(foo.state == .pending && bar.state == .pending)
        try await root.plugin(ChainQux.self).await()
        await root.settled()
        #expect(ChainInits.counts == ["foo": 1, "bar": 1, "qux": 1])
        #expect(bar.state == .active)
        #expect(Set(bar.providerRecords.keys) == ["chain-foo", "chain-qux"])
        #expect(ChainBar.injects.map(\.name) == ["chain-foo", "chain-qux"])
    }

    @Test func aServiceInjectingItselfLeavesNothingBehindWhenDisposed() async throws {
        let (root, _) = try makeRoot()
        func snapshot() -> ([String: Int], Int, Int) {
            (root.listenerCounts, root.fibers.count, root.allProviderRecords.count)
        }
        let before = snapshot()
        let fiber = try root.plugin(SelfInjecting.self)
        await root.settled()
        let after = snapshot()
        #expect(after.1 == before.1 + 2)
        #expect(after.0["custom-event"] == 1)
        try await fiber.dispose()
        await root.settled()
        #expect(snapshot() == before)
        try root.plugin(SelfInjecting.self)
        await root.settled()
        #expect(snapshot() == after)
    }

    @Test func aServiceIsAvailableOnlyWhileItsFiberIsActive() async throws {
        let (root, _) = try makeRoot()
        let fiber = try root.plugin(Standalone.self)
        #expect(!root.has(StandaloneKey.self))
        try await fiber.await()
        #expect(root.has(StandaloneKey.self))
        let standalone = try root[StandaloneKey.self]
        #expect(standalone === fiber.plugin)
        #expect(fiber.providedSlots == [ServiceSlot(name: "standalone", realm: .root)])
        try await fiber.dispose()
        #expect(!root.has(StandaloneKey.self))
        #expect(root.allProviderRecords.isEmpty)
    }

    @Test func aProviderChangeReloadsItsConsumersOnce() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [FooKey.self]) { _, _, scope in
            let foo = try scope.ctx[FooKey.self]
            trail.add("load \(foo.value)")
            try scope.collect { trail.add("unload \(foo.value)") }
        })
        let first = try root.plugin(FunctionPlugin<NoConfig>(name: "first") { _, _, scope in try scope.ctx.provide(FooKey.self, Box(1)) })
        await root.settled()
        try await first.dispose()
        try root.plugin(FunctionPlugin<NoConfig>(name: "second") { _, _, scope in try scope.ctx.provide(FooKey.self, Box(2)) })
        await root.settled()
        #expect(trail.entries == ["load 1", "unload 1", "load 2"])
    }

    @Test func anOptionalDependencyLetsAFiberRunAndReloadsItWhenTheServiceArrives() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "optional", injections: [Injection(FooKey.self, optional: true)]) { _, _, scope in
            trail.add(scope.ctx.has(FooKey.self) ? "with foo" : "without foo")
        })
        try await fiber.await()
        #expect(fiber.state == .active)
        try root.provide(FooKey.self, Box(1))
        await root.settled()
        #expect(trail.entries == ["without foo", "with foo"])
    }
}

import Cordis
import Testing

/// A service whose `setup` does not return until `CustomEvent` is emitted.
@CordisActor
final class PendingFoo: ServicePlugin {
    typealias Key = PendingFooKey
    let ctx: Context

    init(ctx: Context, config: NoConfig) {
        self.ctx = ctx
    }

    func setup(_ scope: EffectScope) async throws {
        await withCheckedContinuation { continuation in
            _ = try? ctx.once(CustomEvent.self) { _ in continuation.resume() }
        }
    }
}

enum PendingFooKey: ServiceKey {
    typealias Value = PendingFoo
    static let name = "foo"
}

/// A service that, in its `setup`, starts a consumer of itself.
@CordisActor
final class SelfInjecting: ServicePlugin {
    typealias Key = SelfInjectingKey
    let ctx: Context

    init(ctx: Context, config: NoConfig) {
        self.ctx = ctx
    }

    func setup(_ scope: EffectScope) async throws {
        try ctx.inject([SelfInjectingKey.self]) { _, _ in }
    }
}

enum SelfInjectingKey: ServiceKey {
    typealias Value = SelfInjecting
    static let name = "test"
}

/// The setups the three services of "multiple injects" ran.
@CordisActor
let multiSetups = Recorder<String>()

/// `foo`, which injects `qux`.
@CordisActor
final class MultiFoo: ServicePlugin {
    typealias Key = MultiFooKey
    nonisolated static var inject: [any ServiceKey.Type] { [MultiQuxKey.self] }
    let ctx: Context

    init(ctx: Context, config: NoConfig) {
        self.ctx = ctx
    }

    func setup(_ scope: EffectScope) async throws {
        multiSetups.record("foo")
    }
}

/// `bar`, which injects `foo` and `qux`.
@CordisActor
final class MultiBar: ServicePlugin {
    typealias Key = MultiBarKey
    nonisolated static var inject: [any ServiceKey.Type] { [MultiFooKey.self, MultiQuxKey.self] }
    let ctx: Context

    init(ctx: Context, config: NoConfig) {
        self.ctx = ctx
    }

    func setup(_ scope: EffectScope) async throws {
        multiSetups.record("bar")
    }
}

/// `qux`, which injects nothing.
@CordisActor
final class MultiQux: ServicePlugin {
    typealias Key = MultiQuxKey
    let ctx: Context

    init(ctx: Context, config: NoConfig) {
        self.ctx = ctx
    }

    func setup(_ scope: EffectScope) async throws {
        multiSetups.record("qux")
    }
}

enum MultiFooKey: ServiceKey {
    typealias Value = MultiFoo
    static let name = "foo"
}

enum MultiBarKey: ServiceKey {
    typealias Value = MultiBar
    static let name = "bar"
}

enum MultiQuxKey: ServiceKey {
    typealias Value = MultiQux
    static let name = "qux"
}

/// Ports cordis-ios's `Tests/CordisTests/ServiceTests.swift`: service plugins in cordis-ios's protocol
/// form, whose consumers wait for `setup`, and which may inject each other or themselves.
@Suite("ServiceTests")
@CordisActor
struct ServiceTests {
    /// Ports cordis-ios ServiceTests "pending inject".
    @Test("pending inject")
    func aConsumerWaitsForItsServicesSetupToReturn() async throws {
        let root = Context()
        let applied = Recorder<Void>()
        try root.inject([PendingFooKey.self]) { _, _ in applied.record(()) }
        #expect(applied.count == 0)

        // The service is provided, but its setup holds the consumer back.
        try root.plugin(PendingFoo.self)
        try await until("PendingFoo's setup to wait for the event") { root.events.snapshot[CustomEvent.name] == 1 }
        #expect(applied.count == 0)

        try root.emit(CustomEvent.self)
        try await quiescence(of: root)
        #expect(applied.count == 1)
    }

    /// Ports cordis-ios ServiceTests "compare snapshot".
    @Test("compare snapshot")
    func deletingAServiceRemovesTheListenersOfItsConsumers() async throws {
        let root = Context()
        let before = root.events.snapshot
        try await root.plugin(SelfInjecting.self).await()
        let after = root.events.snapshot

        await root.registry.delete(SelfInjecting.self)
        try await quiescence(of: root)
        #expect(root.events.snapshot == before)
        try root.plugin(SelfInjecting.self)
        #expect(root.events.snapshot == after)
        #expect(root.registry.size == 1)
    }

    /// Ports cordis-ios ServiceTests "multiple injects".
    @Test("multiple injects")
    func servicesInjectingEachOtherAllStart() async throws {
        let root = Context()
        multiSetups.reset()
        try await root.plugin(MultiFoo.self).await()
        try await root.plugin(MultiBar.self).await()
        try await root.plugin(MultiQux.self).await()
        try await quiescence(of: root)
        #expect(multiSetups.calls.sorted() == ["bar", "foo", "qux"])
        #expect(root.registry.runtimes.allSatisfy { $0.fiberList.allSatisfy { $0.state == .active } })
    }
}

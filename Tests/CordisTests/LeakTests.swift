import Testing
@testable import Cordis

enum LeakServiceKey: ServiceKey {
    typealias Value = LeakService
    static let name = "leak-service"
}

@CordisActor @Service(LeakServiceKey.self)
final class LeakService {
    func apply(_ scope: EffectScope) async throws {
        try ctx.on(CustomEvent.self) {}
        try scope.collect {}
    }
}

@CordisActor @Plugin
final class LeakConsumer {
    @Inject(LeakServiceKey.self) var service: LeakService

    func apply(_ scope: EffectScope) async throws {
        _ = try service
        try ctx.on(StatusEvent.self) { _ in }
        try ctx.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, scope in try scope.collect {} })
    }
}

/// A removed fiber leaves nothing behind: its fiber, context and plugin instance are freed.
@Suite("Leaks", .timeLimit(.minutes(1))) @CordisActor
struct LeakTests {
    struct Weak {
        weak var fiber: Fiber?
        weak var context: Context?
        weak var instance: AnyObject?
        var isFreed: Bool { fiber == nil && context == nil && instance == nil }
    }

    func plugAndDispose(_ root: Context, _ make: () throws -> Fiber) async throws -> Weak {
        var refs = Weak()
        do {
            let fiber = try make()
            await root.settled()
            #expect(fiber.state == .active)
            refs = Weak(fiber: fiber, context: fiber.ctx, instance: fiber.plugin)
            try await fiber.dispose()
            await root.settled()
        }
        return refs
    }

    @Test func aDisposedPluginFreesItsFiberContextAndInstance() async throws {
        let (root, _) = try makeRoot()
        try await root.plugin(LeakService.self).await()
        let before = root.listenerCounts
        let refs = try await plugAndDispose(root) { try root.plugin(LeakConsumer.self) }
        #expect(await eventually { refs.isFreed })
        #expect(refs.fiber == nil)
        #expect(refs.context == nil)
        #expect(refs.instance == nil)
        #expect(root.listenerCounts == before)
    }

    @Test func aDisposedServiceFreesItsFiberContextAndInstance() async throws {
        let (root, _) = try makeRoot()
        let consumer = try root.plugin(LeakConsumer.self)
        let refs = try await plugAndDispose(root) { try root.plugin(LeakService.self) }
        #expect(await eventually { refs.isFreed })
        #expect(refs.fiber == nil && refs.context == nil && refs.instance == nil)
        #expect(consumer.state == .pending)
        #expect(root.allProviderRecords.isEmpty)
    }

    @Test func aFunctionPluginDisposedWithItsParentIsFreed() async throws {
        let (root, _) = try makeRoot()
        weak var child: Fiber?
        let refs = try await plugAndDispose(root) {
            try root.plugin(FunctionPlugin<NoConfig>(name: "parent") { _, _, scope in
                child = try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, scope in try scope.collect {} })
            })
        }
        #expect(await eventually { refs.isFreed && child == nil })
        #expect(child == nil)
        #expect(root.fibers.count == 1)
    }
}

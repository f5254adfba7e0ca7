import Testing
@testable import Cordis

enum GatedKey: ServiceKey {
    typealias Value = Int
    static let name = "gated"
}

/// The availability gate of a provider (cordis's `Service.check`).
@CordisActor
private final class CheckSwitch {
    var open = false
}

@Suite("Service check", .timeLimit(.minutes(1))) @CordisActor
struct ServiceCheckTests {
    @Test func aProviderCountsOnlyWhileItsCheckPassesAndConsumersFollowARecheck() async throws {
        let root = Context()
        let gate = CheckSwitch()
        var loads = 0
        var unloads = 0
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in
            try scope.ctx.provide(GatedKey.self, 42, check: { gate.open })
        })
        let consumer = try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [GatedKey.self]) { _, _, scope in
            #expect(try scope.ctx[GatedKey.self] == 42)
            loads += 1
            try scope.collect { unloads += 1 }
        })
        await root.settled()
        #expect(provider.state == .active)
        #expect(consumer.state == .pending)
        #expect(consumer.missingInjections == ["gated"])

        gate.open = true
        root.recheck(GatedKey.self)
        await root.settled()
        #expect(consumer.state == .active)
        #expect(loads == 1)

        gate.open = false
        root.recheck(GatedKey.self)
        await root.settled()
        #expect(consumer.state == .pending)
        #expect(unloads == 1)
        #expect(provider.state == .active)
    }
}

import Testing
@testable import Cordis

enum SmokeClockKey: ServiceKey {
    typealias Value = SmokeClock
    static let name = "clock"
}

@CordisActor final class SmokeClock {
    var ticks = 0
}

@Suite("Smoke") @CordisActor
struct SmokeTests {
    @Test func consumerFollowsProvider() async throws {
        let root = Context()
        var log: [String] = []
        let consumer = try root.plugin(name: "greeter", inject: [Dependency(SmokeClockKey.self)]) { scope in
            _ = try scope.ctx.get(SmokeClockKey.self)
            log.append("hello")
            try scope.collect { log.append("bye") }
        }
        try await consumer.await()
        #expect(consumer.state == .pending)
        let provider = try root.plugin(name: "clock") { scope in
            try scope.ctx.provide(SmokeClockKey.self, SmokeClock())
        }
        try await provider.await()
        try await consumer.await()
        #expect(consumer.state == .active)
        #expect(log == ["hello"])
        try await provider.dispose()
        #expect(consumer.state == .pending)
        #expect(provider.state == .disposed)
        #expect(log == ["hello", "bye"])
    }
}

import Testing
@testable import Cordis

enum Greeted: EventKey {
    typealias Args = String
    typealias Result = Never
    static let name = "greeted"
}

enum PickColour: EventKey {
    typealias Args = Int
    typealias Result = String
    static let name = "pick-colour"
}

/// cordis-ios's `EventKey` events: `on(Key.self, options:)`, `onBail`, `EventOptions(prepend:)`.
@Suite("EventKey events", .timeLimit(.minutes(1))) @CordisActor
struct EventKeyTests {
    @Test func listenersRunInOrderAndPrependPutsOneFirst() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        try root.on(Greeted.self) { trail.add("first \($0)") }
        try root.on(Greeted.self) { trail.add("second \($0)") }
        try root.on(Greeted.self, options: EventOptions(prepend: true)) { trail.add("prepended \($0)") }
        try root.emit(Greeted.self, "ada")
        #expect(trail.entries == ["prepended ada", "first ada", "second ada"])
    }

    @Test func onBailListenersStopSerialAndBailWhileOnListenersPassBy() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        try root.on(PickColour.self) { trail.add("saw \($0)") }
        try root.onBail(PickColour.self) { $0 > 5 ? "red" : nil }
        try root.onBail(PickColour.self) { value async in value > 1 ? "blue" : nil }
        #expect(try await root.serial(PickColour.self, 9) == "red")
        #expect(try await root.bail(PickColour.self, 3) == "blue")
        #expect(try await root.serial(PickColour.self, 0) == nil)
        #expect(trail.entries == ["saw 9", "saw 3", "saw 0"])
    }

    @Test func listenersAreEffectsOfTheirFiberAndOnceRunsOnce() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "listener") { _, _, scope in
            try scope.ctx.on(Greeted.self) { trail.add("plugin \($0)") }
            try scope.ctx.once(Greeted.self) { trail.add("once \($0)") }
        })
        try await fiber.await()
        try root.emit(Greeted.self, "a")
        try root.emit(Greeted.self, "b")
        try await fiber.dispose()
        try root.emit(Greeted.self, "c")
        #expect(trail.entries == ["plugin a", "once a", "plugin b"])
        #expect(root.listenerCounts["greeted"] == nil)
    }
}

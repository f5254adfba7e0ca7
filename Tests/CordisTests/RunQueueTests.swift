import Testing
@testable import Cordis

enum OrderKey: ServiceKey {
    typealias Value = OrderService
    static let name = "order"
}

/// A trivial service whose coming and going the consumers below follow.
@CordisActor
final class OrderService {}

@Suite("Run queue: dependents reload in the order they started, and a driver that suspends holds up no other")
@CordisActor
struct RunQueueTests {
    private func provide(_ root: Context) throws -> Fiber {
        try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in
            try scope.ctx.provide(OrderKey.self, OrderService())
        })
    }

    @Test("A provider that comes back reloads its 200 consumers in the order they started, every time")
    func consumersReloadInStartOrder() async throws {
        let root = Context()
        let log = Trail()
        var provider = try provide(root)
        let names = (0..<200).map { "consumer-\($0)" }
        var consumers: [Fiber] = []
        for name in names {
            consumers.append(try root.plugin(FunctionPlugin<NoConfig>(name: name, inject: [OrderKey.self]) { _, _, _ in
                log.add(name)
            }))
        }
        await root.settled()
        #expect(log.entries == names)
        for round in 0..<3 {
            log.reset()
            try await provider.dispose()
            await root.settled()
            #expect(consumers.allSatisfy { $0.state == .pending }, "round \(round)")
            provider = try provide(root)
            await root.settled()
            #expect(log.entries == names, "round \(round): reloaded out of start order")
        }
        // Some consumers gone (holes in the middle and at the start) keep the others' order.
        for index in stride(from: 0, to: 200, by: 3) { try await consumers[index].dispose() }
        let kept = names.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
        log.reset()
        try await provider.dispose()
        provider = try provide(root)
        await root.settled()
        #expect(log.entries == kept)
    }

    @Test("A consumer whose load waits for a later consumer's load does not hold it up")
    func suspendedDriverDoesNotBlockTheNext() async throws {
        try await withinDeadline("two consumers that wait for each other") {
            let root = Context()
            let gate = Gate()
            let waiter = try root.plugin(FunctionPlugin<NoConfig>(name: "waiter", inject: [OrderKey.self]) { _, _, _ in
                await gate.pass()
            })
            let signaller = try root.plugin(FunctionPlugin<NoConfig>(name: "signaller", inject: [OrderKey.self]) { _, _, _ in
                gate.open()
            })
            _ = try provide(root)
            // Quiescent only once both loads ended: a driver that held up the next would never get there.
            await root.settled()
            #expect(waiter.state == .active)
            #expect(signaller.state == .active)
        }
    }

    @Test("Fibers scheduled while a turn runs start in a later turn, after it")
    func scheduledDuringATurnStartAfterIt() async throws {
        let root = Context()
        let log = Trail()
        // The first consumer starts a child when it loads: the child's driver is queued during the turn.
        let first = try root.plugin(FunctionPlugin<NoConfig>(name: "first") { _, _, scope in
            log.add("first")
            try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, _ in log.add("child") })
        })
        let second = try root.plugin(FunctionPlugin<NoConfig>(name: "second") { _, _, _ in log.add("second") })
        await root.settled()
        #expect(first.state == .active && second.state == .active)
        #expect(log.entries == ["first", "second", "child"])
    }
}

@Suite("OrderedFibers")
@CordisActor
struct OrderedFibersTests {
    private func makeFibers(_ count: Int) -> [Fiber] {
        let root = Context()
        return (0..<count).map { _ in
            Fiber(id: root.world.makeFiberID(), world: root.world, runner: root.fiber.runner, parent: root, state: .pending)
        }
    }

    @Test("Keeps the fibers by id through removals and compactions; adding twice keeps one; finds each by id")
    func orderThroughRemovals() {
        let fibers = makeFibers(100)
        var list = OrderedFibers()
        for fiber in fibers { list.insert(fiber) }
        list.insert(fibers[5])
        #expect(list.count == 100)
        #expect(list.fibers.map(\.id) == fibers.map(\.id))
        // Remove 70 of them (forcing compactions), in an order unrelated to adding.
        var removed = Set<Int>()
        for index in (0..<100).map({ ($0 * 37) % 100 }).prefix(70) {
            list.remove(id: fibers[index].id)
            removed.insert(fibers[index].id)
            #expect(list.fibers.map(\.id) == fibers.map(\.id).filter { !removed.contains($0) })
            #expect(list.count == 100 - removed.count)
        }
        for fiber in fibers {
            #expect((list[fiber.id] === fiber) == !removed.contains(fiber.id))
        }
        // Removing again, or an id never added, changes nothing.
        list.remove(id: fibers[0].id)
        list.remove(id: -1)
        #expect(list.count == 30)
        // Added again after removal: back in its place by id.
        list.insert(fibers[0])
        #expect(list.fibers.first === fibers[0])
        #expect(list.count == 31)
        for fiber in fibers { list.remove(id: fiber.id) }
        #expect(list.isEmpty && list.fibers.isEmpty)
    }

    @Test("Fibers added out of id order are kept by id")
    func outOfOrder() {
        let fibers = makeFibers(40)
        var list = OrderedFibers()
        for index in (0..<40).map({ ($0 * 17) % 40 }) { list.insert(fibers[index]) }
        #expect(list.count == 40)
        #expect(list.fibers.map(\.id) == fibers.map(\.id))
    }
}

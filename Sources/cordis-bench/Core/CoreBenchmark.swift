import CCordisShim
import Cordis
import Foundation

/// The service every consumer of the core benchmark injects.
enum BenchKey: ServiceKey {
    typealias Value = BenchService
    static let name = "bench"
}

/// A trivial service instance.
@CordisActor
final class BenchService {}

/// `cordis-bench core`: N consumer fibers of one service; time to load them all, to drop them all to
/// `pending` on withdrawal, to bring them all back, and heap bytes per fiber (glibc's count of bytes in
/// use, which a size measured after a larger one still sees: resident memory does not shrink). Each size is
/// measured several times, interleaved with the others; a row holds the medians.
@CordisActor
enum CoreBenchmark {
    /// How many times a full run measures a size: 9 times up to 10,000 fibers (tens of milliseconds
    /// each, which another process's burst can stretch by half), 5 times above (a few hundred
    /// milliseconds each). A `--quick` run measures each size once.
    private static func repetitions(of size: Int) -> Int { size > 10_000 ? 5 : 9 }

    struct Row {
        var consumers: Int
        var load: Double
        var withdraw: Double
        var reprovide: Double
        var bytesPerFiber: Double
    }

    /// How each operation's time grew from one row to another (10 from 10,000 to 100,000 fibers when
    /// the cost per fiber stays the same).
    struct Growth {
        var load: Double
        var withdraw: Double
        var reprovide: Double

        init(from before: Row, to after: Row) {
            load = after.load / before.load
            withdraw = after.withdraw / before.withdraw
            reprovide = after.reprovide / before.reprovide
        }

        /// The largest of the three (`core_scale_ratio`).
        var worst: Double { max(load, withdraw, reprovide) }
    }

    /// A full run (1,000, 10,000 and 100,000 consumers, `repetitions(of:)` times each), or a `--quick`
    /// smoke run (1,000 and 10,000, once).
    static func run(quick: Bool) async throws -> [Row] {
        let sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]
        return try await run(sizes: sizes) { quick ? 1 : repetitions(of: $0) }
    }

    /// Measures each size `repetitions(size)` times, the sizes interleaved (1k, 10k, 100k, 1k, …) so a
    /// change in the machine's load falls on all of them; each figure of a row is the median of its
    /// repetitions. One measurement of 10,000 fibers takes tens of milliseconds, which another process
    /// on this machine can stretch by half: a ratio of two single measurements is mostly that noise.
    private static func run(sizes: [Int], repetitions: (Int) -> Int) async throws -> [Row] {
        var measured: [Int: [Row]] = [:]
        let counts = sizes.map { max(1, repetitions($0)) }
        for round in 0..<(counts.max() ?? 1) {
            for (size, count) in zip(sizes, counts) where round < count {
                measured[size, default: []].append(try await measure(consumers: size))
            }
        }
        return sizes.map { size in
            let rows = measured[size] ?? []
            func median(_ figure: (Row) -> Double) -> Double { AllBenchmark.median(rows.map(figure)) }
            return Row(
                consumers: size, load: median(\.load), withdraw: median(\.withdraw), reprovide: median(\.reprovide),
                bytesPerFiber: median(\.bytesPerFiber))
        }
    }

    private static func provide(on root: Context) throws -> Fiber {
        try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in
            try scope.ctx.provide(BenchKey.self, BenchService())
        })
    }

    private static func measure(consumers count: Int) async throws -> Row {
        let root = Context()
        var provider = try provide(on: root)
        await root.settled()
        let heapBefore = ccordis_heap_in_use()
        let clock = ContinuousClock()
        var fibers: [Fiber] = []
        fibers.reserveCapacity(count)
        let loadStart = clock.now
        for _ in 0..<count {
            fibers.append(try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [BenchKey.self]) { _, _, scope in
                _ = try scope.ctx[BenchKey.self]
            }))
        }
        await root.settled()
        let load = clock.now - loadStart
        let heapAfter = ccordis_heap_in_use()
        try check(fibers, are: .active)

        let withdrawStart = clock.now
        try await provider.dispose()
        await root.settled()
        let withdraw = clock.now - withdrawStart
        try check(fibers, are: .pending)

        let reprovideStart = clock.now
        provider = try provide(on: root)
        await root.settled()
        let reprovide = clock.now - reprovideStart
        try check(fibers, are: .active)

        for fiber in fibers { try await fiber.dispose() }
        try await provider.dispose()
        return Row(
            consumers: count, load: load.seconds, withdraw: withdraw.seconds, reprovide: reprovide.seconds,
            bytesPerFiber: Double(heapAfter > heapBefore ? heapAfter - heapBefore : 0) / Double(count))
    }

    /// The cost of timers at unload: N consumers each holding a pending `ctx.timeout` (an hour away) are
    /// unloaded by withdrawing their service, and N plain consumers likewise, interleaved `rounds` times;
    /// returns the medians (plain, with timeouts) in seconds. Their ratio is how much a pending timeout
    /// adds to a fiber's unload.
    static func timeoutUnload(consumers count: Int, rounds: Int) async throws -> (plain: Double, timeouts: Double) {
        var plain: [Double] = []
        var timeouts: [Double] = []
        for _ in 0..<max(1, rounds) {
            plain.append(try await withdrawal(consumers: count, withTimeouts: false))
            timeouts.append(try await withdrawal(consumers: count, withTimeouts: true))
        }
        return (AllBenchmark.median(plain), AllBenchmark.median(timeouts))
    }

    /// The time to withdraw the service of `count` active consumers (each with a pending timeout when
    /// `withTimeouts`) until they are all `pending`.
    private static func withdrawal(consumers count: Int, withTimeouts: Bool) async throws -> Double {
        let root = Context()
        let provider = try provide(on: root)
        await root.settled()
        var fibers: [Fiber] = []
        fibers.reserveCapacity(count)
        for _ in 0..<count {
            fibers.append(try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [BenchKey.self]) { _, _, scope in
                _ = try scope.ctx[BenchKey.self]
                if withTimeouts { try scope.ctx.timeout(after: .seconds(3600)) {} }
            }))
        }
        await root.settled()
        try check(fibers, are: .active)
        if withTimeouts, let wrong = fibers.first(where: { $0.effects.count != 1 }) {
            throw BenchmarkError("fiber \(wrong.id) holds \(wrong.effects.count) effects, expected its timeout")
        }
        let clock = ContinuousClock()
        let start = clock.now
        try await provider.dispose()
        await root.settled()
        let elapsed = clock.now - start
        try check(fibers, are: .pending)
        for fiber in fibers { try await fiber.dispose() }
        return elapsed.seconds
    }

    /// The cost of one fallback provider (what a node registers for each remote provider of a service)
    /// among `count` of one service, with a consumer bound: each provider fiber is loaded, then all are
    /// disposed in a scattered order. Returns the seconds per provider (load and dispose), the median of
    /// `rounds`. Flat as `count` grows when adding, resolving and removing a provider does not walk the others.
    static func fallbackProviders(count: Int, rounds: Int) async throws -> Double {
        var perProvider: [Double] = []
        for round in 0..<max(1, rounds) {
            let root = Context()
            let consumer = try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [BenchKey.self]) { _, _, scope in
                _ = try scope.ctx[BenchKey.self]
            })
            let clock = ContinuousClock()
            let start = clock.now
            var providers: [Fiber] = []
            providers.reserveCapacity(count)
            for index in 0..<count {
                providers.append(try root.plugin(FunctionPlugin<NoConfig>(name: "proxy\(index)") { _, _, scope in
                    _ = try scope.ctx.provide(name: BenchKey.name, value: BenchService(), fallbackRank: "node\(index)")
                }))
            }
            await root.settled()
            guard consumer.state == .active else { throw BenchmarkError("the consumer is \(consumer.state), expected active") }
            // A scattered order, the same each run (7,919 is a prime larger than any count here).
            for step in 0..<count { try await providers[(step * 7_919 + round) % count].dispose() }
            await root.settled()
            let elapsed = clock.now - start
            guard consumer.state == .pending else { throw BenchmarkError("the consumer is \(consumer.state), expected pending") }
            try await consumer.dispose()
            perProvider.append(elapsed.seconds / Double(count))
        }
        return AllBenchmark.median(perProvider)
    }

    private static func check(_ fibers: [Fiber], are state: FiberState) throws {
        if let wrong = fibers.first(where: { $0.state != state }) {
            throw BenchmarkError("fiber \(wrong.id) is \(wrong.state), expected \(state)")
        }
    }
}

/// A benchmark that could not produce a valid figure.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

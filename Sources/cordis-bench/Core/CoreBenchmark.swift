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
/// use, which a size measured after a larger one still sees: resident memory does not shrink).
@CordisActor
enum CoreBenchmark {
    struct Row {
        var consumers: Int
        var load: Double
        var withdraw: Double
        var reprovide: Double
        var bytesPerFiber: Double
    }

    static func run(sizes: [Int]) async throws -> [Row] {
        var rows: [Row] = []
        for size in sizes {
            rows.append(try await measure(consumers: size))
        }
        return rows
    }

    private static func provide(on root: Context) throws -> Fiber {
        try root.plugin(name: "provider") { scope in
            try scope.ctx.provide(BenchKey.self, BenchService())
        }
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
            fibers.append(try root.plugin(name: "consumer", inject: [Dependency(BenchKey.self)]) { scope in
                _ = try scope.ctx.get(BenchKey.self)
            })
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

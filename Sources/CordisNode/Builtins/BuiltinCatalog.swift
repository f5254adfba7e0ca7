import Cordis
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The built-in catalog of `cordis-node`: `clock`, `counter`, `greeter`, `badge`, `flaky`.
public enum BuiltinCatalog {
    /// The plugins, for a node named `node`.
    @CordisActor
    public static func plugins(node: String) -> PluginCatalog {
        var catalog = PluginCatalog()
        catalog.register(
            FunctionPlugin<NoConfig>(name: "clock", provides: [ClockServiceKey.self]) { ctx, _, scope in
                let logger = ctx.logger("clock")
                // The teardown is logged so an orderly withdrawal's order is observable: the clock stops
                // only after every remote consumer let go.
                try scope.collect { logger.info("clock stopped") }
                try ctx.provide(ClockServiceKey.self, NodeClock(node: node))
            }, as: "clock")
        catalog.register(
            FunctionPlugin<CounterConfig>(name: "counter", provides: [CounterServiceKey.self]) { ctx, config, _ in
                try ctx.provide(CounterServiceKey.self, Counter(start: config.start))
            }, as: "counter")
        catalog.register(
            FunctionPlugin<NoConfig>(name: "greeter", inject: [ClockServiceKey.self]) { ctx, _, scope in
                let logger = ctx.logger("greeter")
                let reading = try await ctx[ClockServiceKey.self].now()
                logger.info("hello at \(reading.seconds) from \(reading.node)")
                try scope.collect { logger.info("bye") }
            }, as: "greeter")
        catalog.register(
            FunctionPlugin<NoConfig>(name: "badge", inject: [CounterServiceKey.self]) { ctx, _, scope in
                let counter = try ctx[CounterServiceKey.self]
                let logger = ctx.logger("badge")
                let value = try await counter.add(1)
                logger.info("badge added, counter at \(value)")
                try scope.collect {
                    let after = try await counter.add(-1)
                    logger.info("badge removed, counter at \(after)")
                }
            }, as: "badge")
        let flakyRuns = FlakyRuns()
        catalog.register(
            FunctionPlugin<FlakyConfig>(name: "flaky") { ctx, config, scope in
                let logger = ctx.logger("flaky")
                if config.fail, flakyRuns.fails(fiber: ctx.fiber.id, times: config.times) {
                    throw FlakyFailure()
                }
                logger.info("flaky running")
                try scope.collect { logger.info("flaky stopped") }
            }, as: "flaky")
        return catalog
    }

    /// The services the built-in plugins share across nodes.
    public static var remoteServices: RemoteServiceCatalog {
        var services = RemoteServiceCatalog()
        services.register(ClockServiceKey.self)
        services.register(CounterServiceKey.self)
        return services
    }
}

/// The config of the built-in `counter`: `{"start": Int}`, 0 when absent.
public struct CounterConfig: Codable, Sendable, Hashable {
    /// Where counting starts.
    public var start: Int

    /// A config starting at `start`.
    public init(start: Int = 0) {
        self.start = start
    }

    private enum CodingKeys: String, CodingKey {
        case start
    }

    /// Decodes `{"start": Int}`; `start` defaults to 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        start = try container.decodeIfPresent(Int.self, forKey: .start) ?? 0
    }
}

/// The config of the built-in `flaky`: `{"fail": Bool, "times": Int}`. With `fail` its `apply` throws,
/// so its fiber is `failed`: every time, or only the first `times` times in this fiber's life (a
/// transient failure, which `restart` recovers). A config change to `fail: false` recovers it too.
public struct FlakyConfig: Codable, Sendable, Hashable {
    /// Whether `apply` throws.
    public var fail: Bool
    /// How many of the fiber's applies throw (nil: every one).
    public var times: Int?

    /// A config.
    public init(fail: Bool = false, times: Int? = nil) {
        self.fail = fail
        self.times = times
    }

    private enum CodingKeys: String, CodingKey {
        case fail, times
    }

    /// Decodes `{"fail": Bool, "times": Int}`; `fail` defaults to false, `times` to every apply.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fail = try container.decodeIfPresent(Bool.self, forKey: .fail) ?? false
        times = try container.decodeIfPresent(Int.self, forKey: .times)
    }
}

/// Why a `flaky` fiber failed: its config said so.
struct FlakyFailure: Error, CustomStringConvertible {
    var description: String { "flaky failed as its config asks (fail: true)" }
}

/// How many times each `flaky` fiber (by id) has failed on this node, for `FlakyConfig.times`.
@CordisActor
final class FlakyRuns {
    private var failures: [Int: Int] = [:]

    /// Whether this apply of `fiber` fails: always without `times`, else while it failed fewer times.
    /// A fiber that runs is forgotten.
    func fails(fiber: Int, times: Int?) -> Bool {
        guard let times else { return true }
        let count = failures[fiber, default: 0]
        guard count >= times else {
            failures[fiber] = count + 1
            return true
        }
        failures[fiber] = nil
        return false
    }
}

/// The built-in clock: the node's name and time.
@CordisActor
final class NodeClock: ClockAPI {
    let node: String

    init(node: String) {
        self.node = node
    }

    // `@CordisActor` in so many words: Swift 6.3 makes a witness of a `nonisolated(nonsending)`
    // requirement nonisolated, whatever its class's isolation.
    @CordisActor func now() async throws -> ClockReading {
        ClockReading(node: node, seconds: Date().timeIntervalSince1970)
    }
}

/// The built-in counter.
@CordisActor
final class Counter: CounterAPI {
    private(set) var current: Int

    init(start: Int) {
        current = start
    }

    /// Adds `delta`; a sum outside `Int`'s range is refused and the value stays as it was. (On the
    /// actor in so many words, as `NodeClock.now()`.)
    @CordisActor func add(_ delta: Int) async throws -> Int {
        let (sum, overflow) = current.addingReportingOverflow(delta)
        guard !overflow else {
            throw RemoteCallError(.invalidArguments, "adding \(delta) to \(current) would overflow the counter")
        }
        current = sum
        return current
    }

    @CordisActor func value() async throws -> Int { current }
}

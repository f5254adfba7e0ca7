import Cordis
import CordisNode
import Foundation

// cordis-test-node: `cordis-node` for the integration tests, with test hooks the production binary
// does not have: `CORDIS_TEST_INTERFACE_VERSIONS=clock=V[,counter=W]` makes it claim those interface
// versions, as a node built from a changed interface would (building a second binary in a test is not
// possible here); the plugin `busy` (config `{"seconds": S}`) blocks `CordisActor` for S seconds when it
// starts, as a misbehaving plugin would, logging `busy: blocking` before and `busy: done` after; the
// plugin `stall` provides the remote service `stall`, whose `block(seconds)` blocks the thread that
// serves the call for that long, as a misbehaving provider would; the plugin `stall-after-call` (config
// `{"seconds": S}`) calls `clock.now()` and then blocks the thread its code resumed on for S seconds,
// logging `stall-after-call: blocking` and `stall-after-call: done`; the plugin `gone` (config
// `{"serving": B}`) provides the local service `gone`, whose `ask()` fails at once with `withdrawn` unless
// serving, as a proxy of a member life that ended does, and `gone-consumer` calls it in its `apply`,
// logging `gone-consumer: attempt N` before and `gone-consumer: loaded` after.

/// The test service `stall`.
@Remote
protocol StallAPI: Sendable {
    /// Blocks the serving thread (not a suspension) for `seconds` (at most 60), then returns them.
    func block(_ seconds: Double) async throws -> Double
}

enum StallServiceKey: RemoteServiceKey {
    typealias Value = any StallAPI
    typealias Interface = StallAPIRemote
    static let name = "stall"
}

@CordisActor
final class Stall: StallAPI {
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func block(_ seconds: Double) async throws -> Double {
        logger.info("stall: blocking for \(seconds) s")
        usleep(UInt32(max(0, min(seconds, 60)) * 1_000_000))
        logger.info("stall: done")
        return seconds
    }
}

var services = BuiltinCatalog.remoteServices
services.register(StallServiceKey.self)
for pair in (ProcessInfo.processInfo.environment["CORDIS_TEST_INTERFACE_VERSIONS"] ?? "").split(separator: ",") {
    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { continue }
    services.claimVersion(parts[1], for: parts[0])
}
let remoteServices = services

/// The test service `gone`: fails every call at once with `withdrawn` unless it is serving.
@CordisActor
final class Gone {
    let serving: Bool

    init(serving: Bool) {
        self.serving = serving
    }

    /// Returns, or throws `withdrawn` without suspending.
    func ask() throws {
        guard serving else { throw RemoteCallError(.withdrawn, "gone is not serving") }
    }
}

enum GoneServiceKey: ServiceKey {
    typealias Value = Gone
    static let name = "gone"
}

/// The configuration of the `gone` test plugin.
struct GoneConfig: Codable, Sendable {
    var serving: Bool
}

/// Counts `gone-consumer`'s loads.
@CordisActor
final class Attempts {
    static let shared = Attempts()
    var count = 0
}

/// The configuration of the `busy` test plugin.
struct BusyConfig: Codable, Sendable {
    var seconds: Double
}

@CordisActor
func testCatalog(node: String) -> PluginCatalog {
    var catalog = BuiltinCatalog.plugins(node: node)
    catalog.register(FunctionPlugin<BusyConfig>(name: "busy") { _, config, scope in
        let logger = scope.ctx.logger("busy")
        logger.info("busy: blocking for \(config.seconds) s")
        // Deliberately blocks the actor's thread (not a suspension): what the test is about.
        usleep(UInt32(max(0, min(config.seconds, 60)) * 1_000_000))
        logger.info("busy: done")
    }, as: "busy")
    catalog.register(FunctionPlugin<BusyConfig>(name: "stall-after-call", inject: [ClockServiceKey.self]) { _, config, scope in
        let logger = scope.ctx.logger("stall-after-call")
        let reading = try await scope.ctx[ClockServiceKey.self].now()
        logger.info("stall-after-call: blocking for \(config.seconds) s after a reading from \(reading.node)")
        usleep(UInt32(max(0, min(config.seconds, 60)) * 1_000_000))
        logger.info("stall-after-call: done")
    }, as: "stall-after-call")
    catalog.register(FunctionPlugin<GoneConfig>(name: "gone", provides: [GoneServiceKey.self]) { _, config, scope in
        try scope.ctx.provide(GoneServiceKey.self, Gone(serving: config.serving))
    }, as: "gone")
    catalog.register(FunctionPlugin<NoConfig>(name: "gone-consumer", inject: [GoneServiceKey.self]) { _, _, scope in
        let logger = scope.ctx.logger("gone-consumer")
        Attempts.shared.count += 1
        logger.info("gone-consumer: attempt \(Attempts.shared.count)")
        try scope.ctx[GoneServiceKey.self].ask()
        logger.info("gone-consumer: loaded")
    }, as: "gone-consumer")
    catalog.register(FunctionPlugin<NoConfig>(name: "stall", provides: [StallServiceKey.self]) { _, _, scope in
        try scope.ctx.provide(StallServiceKey.self, Stall(logger: scope.ctx.logger("stall")))
    }, as: "stall")
    return catalog
}

exit(await NodeRunner.main(
    arguments: Array(CommandLine.arguments.dropFirst()), catalog: { testCatalog(node: $0) }, remoteServices: remoteServices))

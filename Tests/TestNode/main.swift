import Cordis
import CordisNode
import Foundation

// cordis-test-node: `cordis-node` for the integration tests, with test hooks the production binary
// does not have: `CORDIS_TEST_INTERFACE_VERSIONS=clock=V[,counter=W]` makes it claim those interface
// versions, as a node built from a changed interface would (building a second binary in a test is not
// possible here); the plugin `busy` (config `{"seconds": S}`) blocks `CordisActor` for S seconds when it
// starts, as a misbehaving plugin would, logging `busy: blocking` before and `busy: done` after.
var services = BuiltinCatalog.remoteServices
for pair in (ProcessInfo.processInfo.environment["CORDIS_TEST_INTERFACE_VERSIONS"] ?? "").split(separator: ",") {
    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { continue }
    services.claimVersion(parts[1], for: parts[0])
}
let remoteServices = services

/// The configuration of the `busy` test plugin.
struct BusyConfig: Codable, Sendable {
    var seconds: Double
}

@CordisActor
func testCatalog(node: String) -> PluginCatalog {
    var catalog = BuiltinCatalog.plugins(node: node)
    catalog.register(name: "busy", config: BusyConfig.self) { scope, config in
        let logger = scope.ctx.logger("busy")
        logger.info("busy: blocking for \(config.seconds) s")
        // Deliberately blocks the actor's thread (not a suspension): what the test is about.
        usleep(UInt32(max(0, min(config.seconds, 60)) * 1_000_000))
        logger.info("busy: done")
    }
    return catalog
}

exit(await NodeRunner.main(
    arguments: Array(CommandLine.arguments.dropFirst()), catalog: { testCatalog(node: $0) }, remoteServices: remoteServices))

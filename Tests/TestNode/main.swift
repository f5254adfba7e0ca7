import CordisNode
import Foundation

// cordis-test-node: `cordis-node` for the integration tests, with one test hook the production binary
// does not have: `CORDIS_TEST_INTERFACE_VERSIONS=clock=V[,counter=W]` makes it claim those interface
// versions, as a node built from a changed interface would (building a second binary in a test is not
// possible here).
var services = BuiltinCatalog.remoteServices
for pair in (ProcessInfo.processInfo.environment["CORDIS_TEST_INTERFACE_VERSIONS"] ?? "").split(separator: ",") {
    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { continue }
    services.claimVersion(parts[1], for: parts[0])
}
let remoteServices = services
exit(await NodeRunner.main(arguments: Array(CommandLine.arguments.dropFirst()), remoteServices: remoteServices))

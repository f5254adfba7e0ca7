import Cordis
@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// In-process nodes: the link a node uses closed by its peer as a duplicate, with no other link up yet.
@Suite("Cluster: the link in use closed as a duplicate", .faultTurns)
@CordisActor
struct ClusterDuplicateCloseTests {
    @Test("A call in flight on the link closed as a duplicate fails with withdrawn; the next link takes over with the proxies kept, nothing withdrawn")
    func callInFlightFailsAndProxiesStay() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let (a, b) = try await ClusterInProcessCallTests.pair(probe: probe, folder: folder)
        try #require(await ClusterInProcessTests.eventually("b to hold a's echo", on: [a, b]) { b.proxies.count == 1 })
        let proxies = b.proxies.mapValues { ObjectIdentifier($0.fiber) }
        let first = try #require(b.sessions["a"])
        let served = try #require(a.sessions["b"])
        let caller = Task { await ClusterInProcessCallTests.code { try await b.call(peer: "a", service: "echo", realm: nil, method: "ignore", arguments: [:]) } }
        try #require(await ClusterInProcessTests.eventually("a to serve the call", on: [a, b]) { served.inbound.count == 1 })
        // a closes the link b uses as a duplicate (as if a used another one); b dials again.
        served.link.close(reason: "\(Membership.duplicatePrefix) a link to b already exists")
        #expect(await caller.value == .withdrawn)
        #expect(await ClusterInProcessTests.eventually("b to use a new link to a", on: [a, b]) {
            b.sessions["a"].map { $0 !== first } ?? false
        })
        // b kept a's proxy through the change (a withdrawal would have made a new one) and calls work.
        #expect(b.proxies.mapValues { ObjectIdentifier($0.fiber) } == proxies)
        #expect(await ClusterInProcessCallTests.code {
            try await b.call(peer: "a", service: "echo", realm: nil, method: "echo", arguments: ["_0": "again"])
        } == nil)
        probe.release()
        await b.stop()
        await a.stop()
    }
}

import CordisControl
import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Links per console identity: an admitted viewer that opens link after link holds at most its share, and
/// an admin (another identity) still gets in.
@Suite("Cluster: links per console identity", .serialized)
struct ConsoleAdmissionTests {
    typealias Base = ClusterTLSTests

    @Test("a viewer opening 70 console links holds 64; the rest are refused saying why, and an admin still gets in")
    func viewerCannotTakeEverySlot() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            try folder.write("a.json", "[]")
            try folder.write("operators.json", #"{"alice": "viewer", "bob": "admin"}"#)
            let a = try await cluster.launch("a", arguments: Base.arguments(
                "a", in: folder, tls: certificates.flags("node-a"), extra: ["--operators", folder.path("operators.json")]))
            let address = try await ClusterTLSRefusalTests.address(of: a)
            let context = try certificates.context("operator-alice")
            var held: [ControlClient] = []
            var refused = 0
            for _ in 0..<70 {
                do {
                    let client = try await ControlClient.connect(to: address, tls: context, timeout: .seconds(10))
                    // Admitted or not is known once the node answers (a refused link is closed after its handshake).
                    if (try? await client.request(.status, timeout: .seconds(10))) != nil {
                        held.append(client)
                    } else {
                        refused += 1
                        await client.close()
                    }
                } catch {
                    refused += 1
                }
            }
            #expect(held.count == 64, "\(held.count) links held")
            #expect(refused == 6)
            #expect(await a.waitForLine(containing: "alice already holds 64 console links"), "\(a.process.text.suffix(1500))")
            let bob = try await ControlClient.connect(to: address, tls: try certificates.context("operator-bob"), timeout: .seconds(10))
            #expect(try await bob.request(.status).objectValue?["nodes"] != nil)
            await bob.close()
            // A slot comes back when a link ends.
            await held.removeLast().close()
            #expect(await ClusterInProcessTests.awaitAdmitted(address: address, context: context))
            for client in held { await client.close() }
        }
    }
}

extension ClusterInProcessTests {
    /// Connects until a link is admitted (its status request answered), each try awaiting the previous
    /// one, at most 50 tries: the node frees a slot when it reads a link's close.
    static func awaitAdmitted(address: Address, context: TLSContext) async -> Bool {
        for _ in 0..<50 {
            guard let client = try? await ControlClient.connect(to: address, tls: context, timeout: .seconds(10)) else { continue }
            let answered = (try? await client.request(.status, timeout: .seconds(10))) != nil
            await client.close()
            if answered { return true }
        }
        return false
    }
}

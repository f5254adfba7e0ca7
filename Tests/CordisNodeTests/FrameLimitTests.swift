import CordisControl
import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// Members with different frame limits: each learns the other's at the handshake (the `max-frame:N`
/// capability, protocol 1.4) and never sends it a larger frame, so a status page sized for the bigger
/// limit cannot cut the link of the member with the smaller one.
@Suite("Cluster: negotiated frame limits")
struct FrameLimitTests {
    @Test("a member with --max-frame 65536 reads the status of a peer whose page is larger than that; the link stays up")
    func smallerLimitIsHonoured() async throws {
        try await TestCluster.run { cluster in
            // 800 disabled entries whose ids fill b's status: about 70 KB of JSON, more than p accepts in a frame.
            let entries = (0..<800).map { #"{"id": "entry-\#($0)-padding-to-make-the-status-page-larger", "plugin": "clock", "disabled": true}"# }
            let b = try await cluster.start("b", entries: "[" + entries.joined(separator: ",") + "]")
            let p = try await cluster.start("p", entries: "[]", peers: [b], extra: ["--max-frame", "65536"])
            let console = try await cluster.control(p)
            #expect(await p.waitForLine(containing: "linked to b"))
            let status = try await console.request(.status, args: ["cluster": true], timeout: .seconds(10))
            let nodes = StatusPaging.join(status).objectValue?["nodes"]?.arrayValue
            let bStatus = nodes?.compactMap(\.objectValue).first { $0["name"]?.stringValue == "b" }
            #expect(bStatus?["entries"]?.arrayValue?.count == 800)
            #expect(!p.process.text.contains("link to b lost"), "\(p.process.text.suffix(1500))")
            #expect(!p.process.text.contains("exceeds the limit"), "\(p.process.text.suffix(1500))")
        }
    }
}

import Cordis
import CordisControl
@testable import CordisNode
import CordisProcessTesting
import Foundation
import Testing

/// `--console-links`, `--console-requests` and `--console-follows`: parsed, read from `--config`,
/// carried to the node's admission, and in force on a real node.
@Suite("Options: a console identity's budget")
struct ConsoleBudgetOptionsTests {
    typealias Base = DiscoveryOptionsTests

    @Test("the three flags default to the node's budget, take 1 to 65536, are read from --config and reach the configuration")
    @CordisActor func flags() throws {
        #expect(try Base.options([]).consoleBudget == ConsoleBudget(links: nil, requests: 256, follows: 64))
        let set = try Base.options(["--console-links", "8", "--console-requests", "32", "--console-follows", "4"])
        #expect(set.consoleBudget == ConsoleBudget(links: 8, requests: 32, follows: 4))
        for flag in ["--console-links", "--console-requests", "--console-follows"] {
            for value in ["0", "-1", "65537", "1.5", "x", ""] {
                #expect(throws: NodeOptionsError.self, "\(flag) \(value)") { try Base.options([flag, value]) }
            }
            #expect(NodeUsage.text().contains("\(flag) N"))
        }
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("c.json", #"{"console-follows": 5, "console-links": 3}"#)
        #expect(try Base.options(["--config", folder.path("c.json")]).consoleBudget == ConsoleBudget(links: 3, requests: 256, follows: 5))
        #expect(try Base.options(["--config", folder.path("c.json"), "--console-follows", "7"]).consoleBudget.follows == 7)
        try folder.write("bad.json", #"{"console-requests": "3"}"#)
        #expect(throws: NodeOptionsError.self) { try Base.options(["--config", folder.path("bad.json")]) }
        let configuration = try NodeRunner.makeConfiguration(try Base.options(["--console-requests", "9"]))
        #expect(configuration.consoleBudget.requests == 9)
    }

    @Test("a node started with --console-follows 2 refuses a console identity's third subscription, over two links")
    func followsInForce() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.launch("a", arguments: [
                "--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "unix:\(cluster.folder.path("a.sock"))",
                "--console-follows", "2",
            ])
            let first = try await cluster.control(a)
            let second = try await cluster.control(a)
            let follow: JSONObject = ["follow": true, "history": false, "cluster": false]
            _ = try await first.request(.subscribe, args: follow)
            _ = try await second.request(.subscribe, args: follow)
            await #expect {
                _ = try await second.request(.subscribe, args: follow)
            } throws: { error in
                (error as? ControlFailure)?.message.contains("already has 2 follow subscriptions over all its links") == true
            }
        }
    }
}

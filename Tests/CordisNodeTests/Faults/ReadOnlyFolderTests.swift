import Cordis
import CordisNode
import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The entries file's folder turned read-only under a running node (a small tmpfs the test mounts,
/// then remounts read-only): every change is rejected with an error that says why, the node's fibers
/// and the file stay as they were and it keeps serving; writable again, the next change goes through.
@Suite("Faults: a read-only entries folder", .faultTurns)
struct ReadOnlyFolderTests {
    static let entries = #"""
        [{"id": "clock", "plugin": "clock"}, {"id": "counter", "plugin": "counter", "config": {"start": 1}},
         {"id": "greeter", "plugin": "greeter"}, {"id": "spare", "plugin": "clock", "disabled": true}]
        """#

    /// What the node runs, in terms that change when any fiber does: entry, plugin, fiber id, state.
    static func fibers(_ console: ControlClient) async throws -> [String] {
        try await console.nodeStatus()["fibers"]?.arrayValue?.compactMap(\.objectValue).map { fiber in
            [fiber["entry"]?.stringValue ?? "-", fiber["plugin"]?.stringValue ?? "-",
             fiber["fiber"].map { "\($0)" } ?? "-", fiber["state"]?.stringValue ?? "-"].joined(separator: "/")
        }.sorted() ?? []
    }

    @Test("Read-only: enable, disable, config, add and remove are each rejected saying why, fibers and file unchanged; writable again, a change succeeds", .enabled(if: getuid() == 0, "mounts a small tmpfs"))
    func readOnlyFolderRejectsEveryChange() async throws {
        try await TestCluster.run { cluster in
            let disk = try await SmallDiskNode.start(in: cluster, size: "256k", entries: Self.entries)
            defer { disk.unmount() }
            let (path, a, console) = (disk.path, disk.member, disk.console)
            let before = try #require(FileManager.default.contents(atPath: path))
            let fibersBefore = try await Self.fibers(console)

            try disk.remount(readOnly: true, size: "256k")
            let changes: [(ControlCommand, JSONObject)] = [
                (.enable, ["entry": "spare"]),
                (.disable, ["entry": "greeter"]),
                (.config, ["entry": "counter", "config": ["start": 7]]),
                (.add, ["entry": ["id": "second-greeter", "plugin": "greeter"]]),
                (.remove, ["entry": "clock"]),
            ]
            for (command, args) in changes {
                do {
                    _ = try await console.request(command, args: args)
                    Issue.record("\(command) was accepted on a read-only folder")
                } catch let failure as ControlFailure {
                    #expect(failure.code == "rejected", "\(command): \(failure.code)")
                    #expect(failure.message.contains("cannot save \(path)") && failure.message.contains("Read-only file system"),
                            "\(command): \(failure.message)")
                    print("read-only folder: \(command) rejected: \(failure.message)")
                }
                #expect(FileManager.default.contents(atPath: path) == before, "\(command) changed the file")
                #expect(try await Self.fibers(console) == fibersBefore, "\(command) changed the fibers")
            }
            // The node keeps serving.
            let counted = try await console.request(.call, args: ["service": "counter", "method": "add", "args": ["_0": 1]])
            #expect(counted.intValue != nil, "call: \(counted)")
            #expect(a.process.process.isRunning)

            try disk.remount(readOnly: false, size: "256k")
            _ = try await console.request(.add, args: ["entry": ["id": "second-greeter", "plugin": "greeter"]])
            #expect(try await console.awaitFiber(ofEntry: "second-greeter", inState: "active") != nil)
            let saved: EntryTree = try FileEntryStore(url: URL(fileURLWithPath: path)).load()
            #expect(saved.entries.contains { $0.id == "second-greeter" })
        }
    }
}

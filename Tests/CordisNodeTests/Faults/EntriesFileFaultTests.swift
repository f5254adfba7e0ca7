import Cordis
import CordisNode
import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The entries file under faults: a node killed (SIGKILL) while it saves leaves a file that parses and
/// holds the old or the new tree; a corrupted file stops the node with a clear error and stays as it
/// was; a full disk rejects the change and leaves fibers and file as they were.
@Suite("Faults: the entries file", .faultTurns)
struct EntriesFileFaultTests {
    static let entries = #"[{"id": "clock", "plugin": "clock"}, {"id": "counter", "plugin": "counter"}, {"id": "greeter", "plugin": "greeter"}]"#

    /// The file's tree, normalised: (id, plugin, disabled) of each entry.
    static func shape(_ path: String) throws -> [String] {
        try FileEntryStore(url: URL(fileURLWithPath: path)).load().map { "\($0.id):\($0.isGroup ? "-" : $0.plugin):\($0.disabled)" }
    }

    @Test("SIGKILL at random moments of saves, fifteen times: the file always parses and is the old or the new tree")
    func killDuringSave() async throws {
        try await TestCluster.run { cluster in
            var a = try await cluster.start("a", entries: Self.entries)
            let enabled = try Self.shape(a.entriesFile)
            let disabled = enabled.map { $0 == "counter:counter:false" ? "counter:counter:true" : $0 }
            var generator = SystemRandomNumberGenerator()
            var killedWhileSaving = 0
            for round in 0..<15 {
                let console = try await a.control()
                // Toggles in a row, the last not awaited: the kill lands in one of them, somewhere.
                for index in 0..<Int.random(in: 0...3, using: &generator) {
                    _ = try await console.request(index % 2 == 0 ? .disable : .enable, args: ["entry": "counter"])
                }
                let change = Task { try await console.request(.disable, args: ["entry": "counter"]) }
                for _ in 0..<Int.random(in: 0...3_000, using: &generator) { await Task.yield() }
                a.process.signal(SIGKILL)
                _ = await a.process.exitCode()
                if case .failure = await change.result { killedWhileSaving += 1 }
                await console.close()
                let shape = try Self.shape(a.entriesFile)
                #expect(shape == enabled || shape == disabled, "round \(round): \(shape)")
                a = try await cluster.restart(a)
            }
            print("entries file: \(killedWhileSaving) of 15 kills landed before the change was answered")
            // The node still saves: temporary files of killed saves do not get in its way.
            let console = try await cluster.control(a)
            _ = try await console.request(.enable, args: ["entry": "counter"])
            #expect(try Self.shape(a.entriesFile) == enabled)
        }
    }

    @Test("A corrupted entries file stops the node with an error naming it and where, and is left as it was")
    func corruptedFileStopsTheNode() async throws {
        try await TestCluster.run { cluster in
            let path = cluster.folder.path("a.json")
            var corruptions: [[UInt8]] = [
                Array(#"{"version": 1, "entries": [{"id": "clock", "plugin": "clo"#.utf8),  // cut in the middle
                Array(#"{"version": 1, "entries": [{"id": "clock", "plugin": "clock"}]}"#.utf8).map { $0 == 0x6B ? 0xFF : $0 },
                [0x00, 0x00, 0x00, 0x00],
            ]
            corruptions.append(Array(repeating: UInt8(ascii: "["), count: 100_000))
            for bytes in corruptions {
                _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
                let process = try cluster.spawn("a", arguments: [
                    "--name", "a", "--entries", path, "--listen", "unix:\(cluster.folder.path("a.sock"))",
                ])
                let code = await process.exitCode(timeout: .seconds(10))
                #expect(code != nil && code != 0, "exit \(String(describing: code)): \(process.text)")
                #expect(process.text.contains("cannot parse \(path)") || process.text.contains("invalid \(path)"), "\(process.text)")
                #expect(process.text.count < 2_000, "the error is short")
                #expect(FileManager.default.contents(atPath: path) == Data(bytes), "the file was changed")
            }
        }
    }

    @Test("A full disk rejects an add: the file keeps its bytes and the node its fibers", .enabled(if: getuid() == 0, "mounts a small tmpfs"))
    func fullDiskRejectsTheChange() async throws {
        try await TestCluster.run { cluster in
            let disk = try await SmallDiskNode.start(in: cluster, size: "64k", entries: Self.entries)
            defer { disk.unmount() }
            let (mountPoint, path, console) = (disk.mountPoint, disk.path, disk.console)
            let before = try #require(FileManager.default.contents(atPath: path))
            let fibersBefore = try await console.nodeStatus()["fibers"]?.arrayValue?.count
            // Fill the disk.
            let filler = mountPoint + "/filler"
            _ = FileManager.default.createFile(atPath: filler, contents: nil)
            let handle = try #require(FileHandle(forWritingAtPath: filler))
            let chunk = Data(repeating: 0x41, count: 4096)
            var full = false
            for _ in 0..<64 where !full {
                do { try handle.write(contentsOf: chunk) } catch { full = true }
            }
            try? handle.close()
            #expect(full, "the 64 KiB disk never filled")
            await #expect(throws: ControlFailure.self) {
                _ = try await console.request(.add, args: ["entry": ["id": "second-greeter", "plugin": "greeter"]])
            }
            #expect(FileManager.default.contents(atPath: path) == before, "the file was changed")
            #expect(try await console.nodeStatus()["fibers"]?.arrayValue?.count == fibersBefore)
            #expect(try await console.fiber(ofEntry: "second-greeter") == nil)
            // Room again: the same change goes through.
            try FileManager.default.removeItem(atPath: filler)
            _ = try await console.request(.add, args: ["entry": ["id": "second-greeter", "plugin": "greeter"]])
            #expect(try await console.awaitFiber(ofEntry: "second-greeter", inState: "active") != nil)
        }
    }
}

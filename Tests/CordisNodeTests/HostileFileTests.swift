import Cordis
import CordisNode
import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The files a real node is told to read: anything but a regular file is refused at once with a clear
/// error (never a hang), a secret others may write is refused, a symlinked entries file stays a symlink,
/// other processes' temporary files are left alone, and no change can make a file the node cannot read
/// back.
@Suite("Cluster: hostile files")
struct HostileFileTests {
    /// Starts `cordis-node` with `arguments` (after `--name a`) and returns its exit code and output.
    static func run(_ cluster: TestCluster, _ arguments: [String]) async throws -> (Int32?, String) {
        let process = try cluster.spawn("a", arguments: ["--name", "a"] + arguments)
        let code = await process.exitCode(timeout: .seconds(10))
        return (code, process.text)
    }

    @Test("a FIFO or /dev/zero as the entries file stops the node at once with exit 66")
    func entriesFileMustBeRegular() async throws {
        try await TestCluster.run { cluster in
            let fifo = cluster.folder.path("a.json")
            #expect(mkfifo(fifo, 0o600) == 0)
            for path in [fifo, "/dev/zero"] {
                let (code, text) = try await Self.run(cluster, ["--entries", path, "--listen", "unix:\(cluster.folder.path("a.sock"))"])
                #expect(code == 66, "\(path): \(text)")
                #expect(text.contains("regular file"), "\(path): \(text)")
            }
        }
    }

    @Test("a secret file writable by group or others, or a FIFO, is refused with exit 64")
    func secretFileRules() async throws {
        try await TestCluster.run { cluster in
            try cluster.folder.write("a.json", "[]")
            let secret = cluster.folder.path("secret")
            try cluster.folder.write("secret", String(repeating: "s", count: 40))
            let fifo = cluster.folder.path("secret.fifo")
            #expect(mkfifo(fifo, 0o600) == 0)
            for (path, mode) in [(secret, mode_t(0o620)), (secret, mode_t(0o602)), (fifo, mode_t(0o600))] {
                #expect(chmod(path, mode) == 0)
                let (code, text) = try await Self.run(cluster, [
                    "--entries", cluster.folder.path("a.json"), "--listen", "tcp:127.0.0.1:0", "--secret-file", path,
                ])
                #expect(code == 64, "\(path) \(String(mode, radix: 8)): \(text)")
                #expect(text.contains("error:"), "\(text)")
            }
        }
    }

    @Test("an entries file that links to a file the node may not show is refused without quoting it")
    func symlinkToShadowQuotesNothing() async throws {
        try await TestCluster.run { cluster in
            let shadow = try String(contentsOfFile: "/etc/shadow", encoding: .utf8)
            let link = cluster.folder.path("a.json")
            #expect(symlink("/etc/shadow", link) == 0)
            let (code, text) = try await Self.run(cluster, ["--entries", link, "--listen", "unix:\(cluster.folder.path("a.sock"))"])
            #expect(code == 66, "\(text)")
            let secretPart = String(shadow.prefix(while: { $0 != ":" }))
            #expect(!text.contains("'\(secretPart.prefix(1))'"), "\(text)")
            #expect(!text.contains(secretPart), "\(text)")
        }
    }

    @Test("a symlinked entries file stays a symlink after a change, and other processes' temporary files are kept")
    func symlinkIsKept() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            try folder.write("real.json", #"{"version": 1, "entries": [{"id": "counter", "plugin": "counter"}]}"#)
            #expect(symlink(folder.path("real.json"), folder.path("a.json")) == 0)
            try folder.write(".real.json.tmp.1.foreign", "another process's")
            try folder.write(".a.json.tmp.1.foreign", "another process's")
            let a = try await cluster.launch("a", arguments: [
                "--name", "a", "--entries", folder.path("a.json"), "--listen", "unix:\(folder.path("a.sock"))",
            ] + ClusterMember.timing)
            let console = try await cluster.control(a)
            _ = try await console.request(.disable, args: ["entry": "counter"])
            var status = stat()
            #expect(lstat(folder.path("a.json"), &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK)
            let saved = try String(contentsOfFile: folder.path("real.json"), encoding: .utf8)
            #expect(saved.contains(#""disabled": true"#), "\(saved)")
            #expect(FileManager.default.fileExists(atPath: folder.path(".real.json.tmp.1.foreign")))
            #expect(FileManager.default.fileExists(atPath: folder.path(".a.json.tmp.1.foreign")))
        }
    }

    @Test("a chain of groups added one at a time stops at the limit, and the node still reloads and restarts")
    func groupChainStaysReadable() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: "[]")
            let console = try await cluster.control(a)
            var parent: String?
            var refusal: String?
            for depth in 0..<300 {
                var args: JSONObject = ["entry": .object(["id": .string("g\(depth)"), "children": .array([])])]
                if let parent { args["parent"] = .string(parent) }
                do {
                    _ = try await console.request(.add, args: args)
                    parent = "g\(depth)"
                } catch let failure as ControlFailure {
                    refusal = failure.message
                    break
                }
            }
            let message = try #require(refusal, "300 nested groups were all accepted")
            #expect(message.contains("deep") || message.contains("limit"), "\(message)")
            let before = try String(contentsOfFile: a.entriesFile, encoding: .utf8)
            a.process.signal(SIGHUP)
            try #require(await a.waitForLine(containing: "reloaded"), "\(a.process.text)")
            #expect(!a.process.text.contains("reload refused"))
            await a.stop()
            let again = try await cluster.restart(a)
            let restarted = try await cluster.control(again)
            #expect(try await restarted.nodeStatus()["entries"]?.arrayValue?.count == before.components(separatedBy: "\"id\"").count - 1)
        }
    }
}

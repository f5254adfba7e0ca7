import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real `cordis-node` whose stdout and stderr reader went away (`cordis-node … 2>&1 | jq` and jq exited, a
/// log shipper restarting): the node keeps running, answers the console, takes changes (which it logs) and
/// stops with 0 on SIGTERM, never dying of SIGPIPE.
@Suite("A node with a closed output", .serialized)
struct ClosedOutputTests {
    /// The built `cordis-console`.
    static let console = NodeProcess.productsDirectory.appendingPathComponent("cordis-console")

    /// Runs `cordis-console --node ADDRESS ARGUMENTS` to its end.
    static func console(_ address: String, _ arguments: [String]) async throws -> (code: Int32?, output: String) {
        let run = try await ChildProcess.run(Self.console, ["--node", address, "--timeout", "5"] + arguments, deadline: .seconds(30))
        return (run.termination?.reason == .exit ? run.termination?.status : nil, run.output)
    }

    @Test("a node whose stdout and stderr pipe was closed by its reader keeps running, answers, logs changes and exits 0 on SIGTERM",
          arguments: ["text", "json"])
    func closedPipeNeverEndsTheNode(format: String) async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("a.json", #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"greeter","plugin":"greeter"}]}"#)
        let address = "unix:" + folder.path("a.sock")
        // One pipe for stdout and stderr, its reading end closed before the node writes its first line.
        let pipe = try ChildPipe()
        // As NodeProcess does: not systemd's variables another suite may have set in this process meanwhile.
        var environment = ProcessInfo.processInfo.environment
        for name in ["NOTIFY_SOCKET", "JOURNAL_STREAM", "LISTEN_FDS"] { environment[name] = nil }
        let node = try ChildProcess(
            executable: NodeProcess.nodeExecutable,
            arguments: ["--name", "a", "--entries", folder.path("a.json"), "--listen", address, "--log-format", format,
                        "--log-level", "debug"],
            directory: folder.url, environment: environment,
            standardOutput: pipe.writing.fileDescriptor, standardError: pipe.writing.fileDescriptor)
        try pipe.writing.close()
        try pipe.reading.close()
        defer { node.signal(SIGKILL) }

        // Await the node's answer (or its end), with a deadline.
        let deadline = ContinuousClock.now + .seconds(20)
        var answered = false
        while ContinuousClock.now < deadline, node.isRunning {
            if try await Self.console(address, ["status", "--json"]).code == 0 {
                answered = true
                break
            }
        }
        #expect(answered, "the node did not answer; it ended with \(String(describing: node.termination))")
        // A change the node logs, on the closed pipe, then the node still answers.
        let disabled = try await Self.console(address, ["disable", "a:greeter"])
        #expect(disabled.code == 0, "\(disabled.output); the node ended with \(String(describing: node.termination))")
        let status = try await Self.console(address, ["status", "--json"])
        #expect(status.code == 0, "\(status.output); the node ended with \(String(describing: node.termination))")
        #expect(node.isRunning, "the node ended with \(String(describing: node.termination))")
        node.signal(SIGTERM)
        let termination = await node.exit()
        #expect(termination.reason == .exit && termination.status == 0, "\(termination)")
    }
}

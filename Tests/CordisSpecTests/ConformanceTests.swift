import CordisControl
import CordisJSON
import CordisProcessTesting
import CordisWire
import Foundation
import Synchronization
import Testing

/// The Python conformance client (`conformance/`), written from the docs alone, against real
/// `cordis-node` processes: if the node and the specification drift apart, these fail.
@Suite("The Python conformance client works against real nodes", .serialized)
struct ConformanceTests {
    static let timing = ["--heartbeat-interval", "0.2", "--heartbeat-timeout", "3"]

    /// The nodes a test started, stopped (killed, by pid) when it ends however it ends.
    final class Nodes: Sendable {
        private let started = Mutex<[NodeProcess]>([])
        let folder: TestFolder

        init(_ folder: TestFolder) { self.folder = folder }

        /// Starts `cordis-node NAME` on a socket in the folder with `entries`, dialling `peers`.
        func start(_ name: String, entries: String, peers: [String] = [], extra: [String] = []) async throws -> NodeProcess {
            let process = try await ConformanceTests.node(name, in: folder, entries: entries, peers: peers, extra: extra)
            started.withLock { $0.append(process) }
            return process
        }

        func stopAll() async {
            let processes = started.withLock { list in
                defer { list.removeAll() }
                return list
            }
            for process in processes { await process.stop() }
        }
    }

    /// Runs `body` with a fresh folder and the nodes it starts; stops them and removes the folder after.
    static func withNodes(_ body: (Nodes) async throws -> Void) async throws {
        let folder = try TestFolder()
        let nodes = Nodes(folder)
        do {
            try await body(nodes)
        } catch {
            await nodes.stopAll()
            folder.remove()
            throw error
        }
        await nodes.stopAll()
        folder.remove()
    }

    /// Starts `cordis-node NAME` on a socket in `folder` with `entries`, dialling `peers`.
    static func node(
        _ name: String, in folder: TestFolder, entries: String, peers: [String] = [], extra: [String] = []
    ) async throws -> NodeProcess {
        try folder.write("\(name).json", "{\"version\": 1, \"entries\": \(entries)}")
        var arguments = ["--name", name, "--entries", folder.path("\(name).json"), "--listen", "unix:\(folder.path("\(name).sock"))"]
        for peer in peers { arguments += ["--peer", "unix:\(folder.path("\(peer).sock"))"] }
        let process = try NodeProcess(
            name: name, arguments: arguments + timing + extra, directory: folder.url, environment: [:],
            executable: NodeProcess.nodeExecutable)
        let up = await process.waitForLine(containing: "listening on")
        if !up { await process.stop() }
        try #require(up, "\(name) did not start")
        return process
    }

    static func console(_ folder: TestFolder, _ node: String) async throws -> ControlClient {
        try await ControlClient.connect(to: Address(parsing: "unix:\(folder.path("\(node).sock"))"), name: "schema-check")
    }

    @Test("the Python console reads status and drives a change relayed to another member, logged there with the console")
    func pythonConsoleDrivesARelayedChange() async throws {
        try await Self.withNodes { nodes in
            let folder = nodes.folder
            let b = try await nodes.start("b", entries: #"[{"id": "counter", "plugin": "counter"}]"#)
            let a = try await nodes.start(
                "a", entries: #"[{"id": "clock", "plugin": "clock"}]"#, peers: ["b"])
            #expect(await a.waitForLine(containing: "linked to b"))
            #expect(await b.waitForLine(containing: "linked to a"))

            let run = try await ProgramRun.python([
                "conformance/console.py", "unix:\(folder.path("a.sock"))", "check", "b:counter", "--counter", "--silence", "4",
            ])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("conformance: console checks passed"), "\(run.output)")
            // The change ran on b, which logs the operator behind the console, not only the member that relayed it.
            let me = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "uid:\(getuid())"
            #expect(await b.waitForLine(containing: "\(me) via member a: disable entry counter", timeout: .seconds(10)))
            #expect(await b.waitForLine(containing: "\(me) via member a: enable entry counter", timeout: .seconds(10)))
        }
    }

    @Test("what a real node answers fits the control schema")
    func realResultsFitTheControlSchema() async throws {
        try await Self.withNodes { nodes in
            let folder = nodes.folder
            _ = try await nodes.start("b", entries: #"[{"id": "counter", "plugin": "counter"}]"#)
            let a = try await nodes.start(
                "a",
                entries: #"[{"id": "greeter", "plugin": "greeter"}, {"id": "clock", "plugin": "clock", "disabled": true}, {"id": "badge", "plugin": "badge"}]"#,
                peers: ["b"])
            #expect(await a.waitForLine(containing: "badge added"))
            let schemas = try Repository.schemas()
            let client = try await Self.console(folder, "a")
            func check(_ value: JSONValue, _ definition: String) {
                let problems = schemas.problems(of: value, file: "control.schema.json", definition: definition)
                #expect(problems.isEmpty, "\(definition): \(problems) in \(value)")
            }
            check(try await client.request(.status, args: ["cluster": true]), "status")
            check(try await client.request(.members), "members")
            check(try await client.request(.catalog, node: "b"), "catalog")
            check(try await client.request(.disable, node: "b", args: ["entry": "counter"]), "entryChange")
            check(try await client.request(.enable, node: "b", args: ["entry": "counter"]), "entryChange")
            check(try await client.request(.subscribe, args: ["follow": false]), "subscribed")
            check(try await client.request(.unsubscribe, args: ["id": 999]), "unsubscribed")
            check(try await client.request(
                .add, node: "b", args: ["entry": ["id": "second", "plugin": "counter", "config": ["start": 5]]]), "entryChange")
            check(try await client.request(.remove, node: "b", args: ["entry": "second"]), "removed")
            await client.close()
        }
    }

    @Test("a Python node-role peer provides counter to a Swift consumer, withdraws it in order and leaves the cluster")
    func pythonProviderServesASwiftConsumer() async throws {
        try await Self.withNodes { nodes in
            let folder = nodes.folder
            let a = try await nodes.start(
                "a", entries: #"[{"id": "badge", "plugin": "badge"}]"#)
            let run = try await ProgramRun.python(["conformance/provider.py", "unix:\(folder.path("a.sock"))", "--name", "py"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("conformance: provider checks passed"), "\(run.output)")
            #expect(await a.waitForLine(containing: "badge added, counter at 1"))
            #expect(await a.waitForLine(containing: "py left the cluster"))

            // The member that left is gone from the view: `members` does not list it and `status` finds
            // nothing wrong (exit 0, not 3).
            let client = try await Self.console(folder, "a")
            let members = try await client.request(.members)["members"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
            #expect(members == ["a"])
            await client.close()
            let status = try await ProgramRun.run(
                NodeProcess.productsDirectory.appendingPathComponent("cordis-console"),
                ["--node", "unix:\(folder.path("a.sock"))", "status"], deadline: .seconds(30))
            #expect(status.status == 0, "\(status.output)")
        }
    }

    @Test("with the cluster secret the Python provider and console authenticate and use sealed frames, in protocol 1.5 and 1.3; another secret is refused")
    func pythonConsoleAuthenticates() async throws {
        try await Self.withNodes { nodes in
            let folder = nodes.folder
            try folder.write("secret", "0123456789abcdef0123456789abcdef-one\n")
            try folder.write("other", "0123456789abcdef0123456789abcdef-two\n")
            for file in ["secret", "other"] { chmod(folder.path(file), 0o600) }
            let a = try await nodes.start(
                "a", entries: #"[{"id": "badge", "plugin": "badge"}]"#, extra: ["--secret-file", folder.path("secret")])
            let address = "unix:\(folder.path("a.sock"))"
            let provider = try await ProgramRun.python([
                "conformance/provider.py", address, "--secret-file", folder.path("secret"), "--name", "py",
            ])
            #expect(provider.status == 0, "\(provider.output)")
            #expect(await a.waitForLine(containing: "badge removed, counter at 0"))
            let run = try await ProgramRun.python(["conformance/console.py", address, "--secret-file", folder.path("secret"), "check", "a:badge"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("conformance: console checks passed"), "\(run.output)")
            #expect(run.output.contains("error of code unknown-type"), "\(run.output)")
            // A console of protocol 1.3 gets the codes spelled as 1.3 wrote them.
            let older = try await ProgramRun.python([
                "conformance/console.py", address, "--secret-file", folder.path("secret"), "--protocol", "1.3", "check", "a:badge",
            ])
            #expect(older.status == 0, "\(older.output)")
            #expect(older.output.contains("error of code unknownType"), "\(older.output)")
            let refused = try await ProgramRun.python(["conformance/console.py", address, "--secret-file", folder.path("other"), "status"])
            #expect(refused.status == 69, "\(refused.output)")
            #expect(refused.output.contains("bad-mac: authentication failed"), "\(refused.output)")
        }
    }
}

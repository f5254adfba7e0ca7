import CordisProcessTesting
import Cordis
import CordisNode
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `cordis-node` started the way systemd starts it: through `systemd-socket-activate`, which
/// holds the listening socket and starts the node at the first connection, and with a notification
/// socket standing in for systemd's.
@Suite("Systemd activation", .serialized)
struct SystemdActivationTests {
    static let activator = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")

    static let entries = #"{ "version": 1, "entries": [ { "id": "clock", "plugin": "clock" } ] }"#

    /// The program a process is running now (`/proc/PID/exe`), or nil once it has exited.
    static func program(of process: NodeProcess) -> String? {
        let link = "/proc/\(process.process.processIdentifier)/exe"
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: link)).map {
            URL(fileURLWithPath: $0).lastPathComponent
        }
    }

    @Test(
        "A socket-activated node starts at the first connection and answers status",
        .enabled(if: FileManager.default.isExecutableFile(atPath: activator.path)))
    func socketActivatedNodeStartsAtFirstConnectionAndAnswersStatus() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("entries.json", Self.entries)
        let socketPath = folder.path("a.sock")
        let activator = try NodeProcess(
            name: "activator",
            arguments: [
                "-l", socketPath, "--fdname=unix", NodeProcess.nodeExecutable.path,
                "--name", "a", "--entries", folder.path("entries.json"),
            ],
            directory: folder.url, executable: Self.activator)
        defer { activator.signal(SIGKILL) }

        // systemd-socket-activate says where it listens, then waits for a connection: no node yet.
        #expect(await activator.waitForLine(containing: "Listening on \(socketPath)"))
        #expect(FileManager.default.fileExists(atPath: socketPath))
        #expect(Self.program(of: activator) == "systemd-socket-activate")
        #expect(!activator.text.contains("listening on unix:"))

        // The first connection starts the node in the same process, on the passed socket.
        let client = try await ControlClient.connect(to: .unix(path: socketPath), timeout: .seconds(30))
        let status = try await client.request(.status, timeout: .seconds(30))
        await client.close()
        let node = try #require(status["nodes"]?[0])
        #expect(node["name"]?.stringValue == "a")
        #expect(node["reachable"]?.boolValue == true)
        #expect(node["entries"]?[0]?["id"]?.stringValue == "clock")
        #expect(Self.program(of: activator) == "cordis-node")
        #expect(await activator.waitForLine(containing: "listening on unix:\(socketPath)"))

        activator.signal(SIGTERM)
        #expect(await activator.exitCode() == 0)
    }

    @Test(
        "A socket-activated TCP listener without a secret is refused with exit 64",
        .enabled(if: FileManager.default.isExecutableFile(atPath: activator.path)))
    func socketActivatedTCPWithoutSecretIsRefused() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("entries.json", Self.entries)
        // systemd-socket-activate takes no port 0: a port below the ephemeral range, which no other
        // test's connection or port-0 listener can take before the activator binds it.
        let free = try LoopbackPorts.free(1)[0]
        let activator = try NodeProcess(
            name: "activator",
            arguments: [
                "-l", "127.0.0.1:\(free)", NodeProcess.nodeExecutable.path,
                "--name", "a", "--entries", folder.path("entries.json"),
            ],
            directory: folder.url, executable: Self.activator)
        defer { activator.signal(SIGKILL) }
        #expect(await activator.waitFor("the activator's port") { $0.contains("Listening on 127.0.0.1:") })
        let port = try #require(activator.text.split(separator: "\n").compactMap { line -> UInt16? in
            guard let range = line.range(of: "Listening on 127.0.0.1:") else { return nil }
            return UInt16(line[range.upperBound...].prefix { $0.isNumber })
        }.first)
        // The first connection starts the node, which must refuse to serve TCP without a secret.
        _ = try? await ControlClient.connect(to: .tcp(host: "127.0.0.1", port: port), timeout: .seconds(5))
        #expect(await activator.exitCode() == 64)
        #expect(activator.text.contains("without a secret"))
    }

    @Test("A node sends READY=1 when it has started, and RELOADING=1 and STOPPING=1 on signals")
    func nodeNotifiesReadyReloadingAndStopping() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("entries.json", Self.entries)
        let notify = try NotifySocket()
        let socketPath = folder.path("a.sock")
        let node = try NodeProcess(
            name: "a",
            arguments: ["--name", "a", "--entries", folder.path("entries.json"), "--listen", "unix:\(socketPath)"],
            directory: folder.url, environment: ["NOTIFY_SOCKET": notify.path])
        defer { node.signal(SIGKILL) }

        let ready = await Self.receive("READY=1", from: notify)
        #expect(ready.received, "datagrams before READY=1: \(ready.seen); output:\n\(node.text)")
        // READY=1 comes after the listener is up: the socket answers at once.
        let client = try await ControlClient.connect(to: .unix(path: socketPath))
        let status = try await client.request(.status)
        await client.close()
        #expect(status["nodes"]?[0]?["name"]?.stringValue == "a")

        node.signal(SIGHUP)
        let reloading = await Self.receive("RELOADING=1", from: notify)
        #expect(reloading.received, "datagrams: \(reloading.seen)")
        #expect(await Self.receive("READY=1", from: notify).received)

        node.signal(SIGTERM)
        let stopping = await Self.receive("STOPPING=1", from: notify)
        #expect(stopping.received, "datagrams: \(stopping.seen)")
        #expect(await node.exitCode() == 0)
    }

    /// The files process `pid` has mapped (`/proc/PID/maps`), by name.
    static func mappedFiles(of pid: Int32) throws -> Set<String> {
        // Read to the end: a /proc file has no size to read by.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first.map {
                String($0.split(separator: "/").last ?? $0)
            }
        })
    }

    @Test("A node not run by systemd maps neither libsystemd nor Foundation's ICU; given a notification socket, it loads libsystemd and notifies")
    func librariesLoadedOnlyWhenNeeded() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        try folder.write("entries.json", Self.entries)
        // An empty NOTIFY_SOCKET counts as none (and hides one the test process may have).
        let plain = try NodeProcess(
            name: "a", arguments: ["--name", "a", "--entries", folder.path("entries.json"), "--listen", "unix:\(folder.path("a.sock"))"],
            directory: folder.url, environment: ["NOTIFY_SOCKET": ""])
        defer { plain.signal(SIGKILL) }
        #expect(await plain.waitForLine(containing: "node a started"))
        let files = try Self.mappedFiles(of: plain.process.processIdentifier)
        #expect(files.contains { $0.hasPrefix("libswiftCore") }, "\(files.sorted())")
        #expect(!files.contains { $0.hasPrefix("libsystemd") }, "\(files.sorted())")
        #expect(!files.contains { $0.hasPrefix("libFoundation.") || $0.contains("FoundationInternationalization") || $0.contains("ICU") },
                "\(files.sorted())")

        let notify = try NotifySocket()
        let told = try NodeProcess(
            name: "b", arguments: ["--name", "b", "--entries", folder.path("entries.json"), "--listen", "unix:\(folder.path("b.sock"))"],
            directory: folder.url, environment: ["NOTIFY_SOCKET": notify.path])
        defer { told.signal(SIGKILL) }
        #expect(await Self.receive("READY=1", from: notify).received, "output:\n\(told.text)")
        #expect(try Self.mappedFiles(of: told.process.processIdentifier).contains { $0.hasPrefix("libsystemd.so.0") })
    }

    /// Reads datagrams until one holds the line `line`, for at most 20 seconds in all.
    static func receive(_ line: String, from socket: NotifySocket) async -> (received: Bool, seen: [String]) {
        let deadline = ContinuousClock.now + .seconds(20)
        var seen: [String] = []
        for _ in 0..<1_000 {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            let milliseconds = Int32(clamping: left.components.seconds * 1_000 + 1)
            guard let datagram = await socket.receive(timeout: milliseconds) else { break }
            if datagram.split(separator: "\n").contains(Substring(line)) { return (true, seen) }
            seen.append(datagram)
        }
        return (false, seen)
    }
}

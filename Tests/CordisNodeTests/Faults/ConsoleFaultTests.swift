import Cordis
import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Consoles that misbehave: one killed in the middle of a command (the change is applied whole or not
/// at all, and the node serves everyone else), one that follows events and never reads (the node keeps
/// serving, and what it holds for that console is bounded).
@Suite("Faults: consoles that die or never read", .faultTurns)
struct ConsoleFaultTests {
    static var consoleExecutable: URL { NodeProcess.productsDirectory.appendingPathComponent("cordis-console") }

    @Test("cordis-console killed at random moments of an add: each entry is in both the file and the status, or in neither")
    func consoleKilledMidCommand() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let observer = try await cluster.control(a)
            var generator = SystemRandomNumberGenerator()
            var applied = 0
            for round in 0..<12 {
                let id = "added-\(round)"
                let console = try NodeProcess(
                    name: "console-\(round)",
                    arguments: ["--node", a.address, "add", "a", "--id", id, "--plugin", "greeter"],
                    directory: cluster.folder.url, executable: Self.consoleExecutable)
                for _ in 0..<Int.random(in: 0...60_000, using: &generator) { await Task.yield() }
                console.signal(SIGKILL)
                _ = await console.exitCode()
                // The node answers the next request after it has handled the dead console's last bytes
                // on the same loop; the change, if it was read, is complete by the status that follows.
                let status = try await observer.nodeStatus()
                let inStatus = (status["entries"]?.arrayValue ?? []).contains { $0.objectValue?["id"]?.stringValue == id }
                let inFile = try FileEntryStore(url: URL(fileURLWithPath: a.entriesFile)).load().entries.contains { $0.id == id }
                #expect(inStatus == inFile, "round \(round): \(id) in the status: \(inStatus), in the file: \(inFile)")
                if inStatus {
                    applied += 1
                    #expect(try await observer.awaitFiber(ofEntry: id, inState: "active") != nil)
                }
            }
            print("console killed mid-command: 12 kills, \(applied) adds applied whole, \(12 - applied) not at all")
            // The node still serves: a new console changes things.
            let late = try await cluster.control(a)
            let disabled = try await late.request(.disable, args: ["entry": "clock"])
            #expect(disabled.objectValue?["disabled"]?.boolValue == true)
            #expect(a.process.process.isRunning)
        }
    }

    @Test("A console that follows events and never reads: the node keeps serving others and its memory stays bounded")
    func subscriberThatNeverReads() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let console = try await cluster.control(a)
            let loop = try EventLoop()
            defer { Task { await loop.shutdown() } }
            let identity = PeerIdentity(role: .console, name: "deaf", incarnation: UUID().uuidString)
            let deaf = try await Link.connect(
                to: try Address(parsing: a.address), on: loop, configuration: HandshakeConfiguration(identity: identity, secrets: nil))
            try deaf.enqueue(.request(ControlRequest(id: 1, command: .subscribe, args: ["follow": true, "history": false])))
            // Nothing ever reads `deaf.messages`: once its queue is full, the link stops reading its socket.
            let start = try #require(a.usage)
            let group: JSONValue = .object([
                "id": "crowd", "plugin": "group",
                "children": .array((0..<1_000).map { .object(["id": .string("g\($0)"), "plugin": "greeter"]) }),
            ])
            var peak = start.residentKiB
            var cycles = 0
            var slowest = Duration.zero
            // Until the node drops the deaf console, and five cycles more; at most 90 s. Whichever bound it
            // reaches first drops it: the heartbeat timeout (its link stopped reading, so its heartbeat
            // answers stopped too; a debug build, about a second a cycle, gets there first) or the 16 MiB
            // outbound buffer (a release build fills it within the timeout).
            func dropped() -> Bool {
                a.process.text.contains("no heartbeat from deaf")
                    || a.process.text.contains("link to deaf failed: outboundBufferFull")
            }
            var afterDrop = 0
            let deadline = ContinuousClock.now + .seconds(90)
            while cycles < 1_000, afterDrop < 5, ContinuousClock.now < deadline {
                if dropped() { afterDrop += 1 }
                cycles += 1
                _ = try await console.request(.add, args: ["entry": group], timeout: .seconds(60))
                _ = try await console.request(.remove, args: ["entry": "crowd"], timeout: .seconds(60))
                let asked = ContinuousClock.now
                _ = try await console.nodeStatus()
                slowest = max(slowest, ContinuousClock.now - asked)
                peak = max(peak, a.usage?.residentKiB ?? 0)
            }
            let end = try #require(a.usage)
            print("never-reading subscriber: \(cycles) cycles of 1,000 fibers added and removed; resident \(start.residentKiB) KiB -> peak \(peak) KiB -> \(end.residentKiB) KiB; slowest status \(slowest); dropped: \(dropped())")
            // The node dropped the deaf console at its heartbeat timeout or its outbound limit: what it held
            // for it is bounded by those; 1,000 fibers coming and going cost a few MiB.
            #expect(dropped(), "the deaf console was never dropped")
            #expect(peak - start.residentKiB < 40 * 1024, "resident memory grew from \(start.residentKiB) to \(peak) KiB")
            #expect(slowest < .seconds(5))
            _ = deaf
        }
    }
}

import CordisControl
import CordisJSON
import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Consoles that read slowly or not at all, against a real `cordis-node`: their subscriptions end with a
/// `lagged` event, a console that leaves more than it may unread is closed, the node's memory stays
/// bounded, and one console identity holds a bounded number of subscriptions.
@Suite("Cluster: slow readers cost a bounded amount", .serialized)
struct SlowReaderTests {
    static let entries = #"[{"id": "clock", "plugin": "clock"}]"#

    /// Node `a` with `clock`, whose heartbeat timeout (60 s) is beyond the test: a console that reads
    /// nothing answers no heartbeat either, and what is tested here is the bound on what it leaves unread.
    static func start(in cluster: TestCluster) async throws -> ClusterMember {
        try cluster.folder.write("a.json", entries)
        return try await cluster.launch("a", arguments: [
            "--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "unix:\(cluster.folder.path("a.sock"))",
            "--heartbeat-interval", "0.5", "--heartbeat-timeout", "60",
        ])
    }

    /// A console link that reads nothing until the test asks it to (its frames wait in its queue, then
    /// in the sockets, then on the node).
    static func silentConsole(to member: ClusterMember, on loop: EventLoop, name: String) async throws -> Link {
        let identity = PeerIdentity(role: .console, name: name, incarnation: UUID().uuidString.lowercased())
        // Its own queue holds little, so what it does not read soon waits on the node.
        let limits = ConnectionLimits(inboundQueueFrames: 8, inboundQueueBytes: 64 * 1024)
        return try await Link.connect(
            to: try Address(parsing: member.address), on: loop,
            configuration: HandshakeConfiguration(identity: identity, secrets: nil, tls: nil), limits: limits)
    }

    /// Disables and enables `clock` until `done` holds, at most `limit` times.
    static func toggle(_ admin: ControlClient, limit: Int, until done: () -> Bool) async throws -> Int {
        for index in 0..<limit {
            if done() { return index }
            _ = try await admin.request(index % 2 == 0 ? .disable : .enable, args: ["entry": "clock"])
        }
        return limit
    }

    /// The node's highest resident memory so far, in KiB (`VmHWM`).
    static func peakResidentKiB(of member: ClusterMember) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(member.process.process.processIdentifier)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test("a console that follows and does not read gets one lagged event per subscription, then nothing more, and may follow again")
    func laggingSubscriber() async throws {
        try await TestCluster.run { cluster in
            let a = try await Self.start(in: cluster)
            let admin = try await cluster.control(a)
            let loop = try EventLoop(name: "silent")
            defer { Task { await loop.shutdown() } }
            let silent = try await Self.silentConsole(to: a, on: loop, name: "silent")
            // Sixteen subscriptions: its link falls behind in a few dozen toggles.
            for id in 1...16 {
                try silent.enqueue(.request(ControlRequest(
                    id: id, command: .subscribe, args: ["follow": true, "history": false, "cluster": false])))
            }
            let toggles = try await Self.toggle(admin, limit: 1_000) { a.process.text.occurrences(of: "ended 16 subscriptions of silent") > 0 }
            #expect(toggles < 1_000, "the node never ended the subscriptions: \(a.process.text.suffix(1500))")
            #expect(a.process.text.lines(containing: "ended 16 subscriptions of silent").first?.contains("fell behind") == true)
            // A few more changes: none of them may reach the ended subscriptions.
            _ = try await Self.toggle(admin, limit: 6) { false }
            try silent.enqueue(.request(ControlRequest(id: 50, command: .status)))
            var lagged: Set<Int> = []
            var afterLagged = 0
            var answered = false
            let messages = silent.messages
            for try await message in messages {
                switch message {
                case .event(let event) where event.kind == "lagged":
                    #expect(event.detail["reason"]?.stringValue?.contains("fell behind: ") == true)
                    #expect(lagged.insert(event.id).inserted, "two lagged events for subscription \(event.id)")
                case .event(let event):
                    if lagged.contains(event.id) { afterLagged += 1 }
                case .response(let response) where response.id == 50:
                    answered = true
                default:
                    break
                }
                if answered { break }
            }
            #expect(lagged == Set(1...16))
            #expect(afterLagged == 0)
            #expect(answered, "the link stayed open and answers")
            // Following again works.
            try silent.enqueue(.request(ControlRequest(
                id: 60, command: .subscribe, args: ["follow": true, "history": false, "cluster": false])))
            _ = try await Self.toggle(admin, limit: 1) { false }
            var followedAgain = false
            for try await message in messages {
                if case .event(let event) = message, event.id == 60 {
                    followedAgain = true
                    break
                }
            }
            #expect(followedAgain)
            silent.close(reason: "done")
        }
    }

    @Test("consoles that pipeline requests and never read are closed once 1 MiB waits, the node's memory stays bounded, and others are served")
    func nonReadingConsolesAreClosed() async throws {
        try await TestCluster.run { cluster in
            let a = try await Self.start(in: cluster)
            let admin = try await cluster.control(a)
            // A full history makes each `subscribe` answer about 60 KB.
            _ = try await Self.toggle(admin, limit: 130) { false }
            let before = try Self.peakResidentKiB(of: a)
            let loop = try EventLoop(name: "silent")
            defer { Task { await loop.shutdown() } }
            var silent: [Link] = []
            // Sixty-four answers each (about 3.8 MB) are more than a console may leave unread; the four
            // consoles' 256 requests stay within what one identity (uid:0, every console here) may have
            // running, so none is answered `busy` instead (small answers: such a console is never closed).
            for index in 0..<4 {
                let link = try await Self.silentConsole(to: a, on: loop, name: "silent\(index)")
                for id in 1...64 {
                    try? link.enqueue(.request(ControlRequest(
                        id: id, command: .subscribe, args: ["follow": false, "history": true, "cluster": false])))
                }
                silent.append(link)
            }
            // Each console is closed once, and logged once: answers still owed to it after that are dropped.
            #expect(await a.waitForOccurrences(of: "is not reading", count: 4, timeout: .seconds(60)),
                    "\(a.process.text.suffix(2000))")
            let closed = a.process.text.lines(containing: "is not reading")
            #expect(closed.allSatisfy { $0.contains("more than the 1048576 a console may leave unread") }, "\(closed)")
            let consoles = closed.compactMap { $0.firstMatch(of: /closing the link of (silent\d)/).map { String($0.1) } }
            #expect(consoles.sorted() == (0..<4).map { "silent\($0)" }, "\(closed)")
            let grown = try Self.peakResidentKiB(of: a) - before
            print("non-reading consoles: the node grew by \(grown) KiB")
            // Without the bound each of them held up to 16 MiB (its connection's outbound limit), 64 MiB in
            // all; with it the node grows by 7 to 10 MiB.
            #expect(grown < 32 * 1024, "the node grew by \(grown) KiB")
            // Every console of this Unix user is one identity (uid:0) with one budget of requests: the
            // admin is served once the closed links' sessions have ended (their requests stop counting),
            // answered `busy` until then.
            var status: JSONValue?
            let deadline = ContinuousClock.now + .seconds(20)
            while status == nil, ContinuousClock.now < deadline {
                do {
                    status = try await admin.request(.status)
                } catch let failure as ControlFailure where failure.code == "busy" {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(status?["nodes"] != nil, "the admin was not served within 20 s")
            for link in silent { link.close(reason: "done") }
        }
    }

    @Test("one console identity holds at most 64 follow subscriptions over all its links; one comes back when a link ends")
    func followsPerIdentity() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: Self.entries)
            var consoles: [ControlClient] = []
            for _ in 0..<4 {
                let console = try await cluster.control(a)
                for _ in 0..<16 {
                    _ = try await console.request(.subscribe, args: ["follow": true, "history": false, "cluster": false])
                }
                consoles.append(console)
            }
            let fifth = try await cluster.control(a)
            await #expect {
                _ = try await fifth.request(.subscribe, args: ["follow": true, "history": false, "cluster": false])
            } throws: { error in
                let failure = error as? ControlFailure
                return failure?.code == "rejected"
                    && failure?.message.contains("already has 64 follow subscriptions over all its links") == true
            }
            await consoles.removeLast().close()
            let deadline = ContinuousClock.now + .seconds(10)
            var followed = false
            while !followed, ContinuousClock.now < deadline {
                followed = (try? await fifth.request(
                    .subscribe, args: ["follow": true, "history": false, "cluster": false])) != nil
            }
            #expect(followed, "a subscription came back once a link ended")
        }
    }
}

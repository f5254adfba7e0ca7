import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Heartbeats are answered on the event loop, not on `CordisActor`: a plugin that keeps the actor busy
/// longer than the heartbeat timeout does not get its node declared down by its peers.
@Suite("Cluster: a node whose CordisActor is busy stays up")
struct ClusterBusyActorTests {
    /// Starts b, then a with b as its peer, both test nodes beating every 0.2 s and giving up after 2 s
    /// of silence, with the given entries files.
    static func startPair(_ cluster: TestCluster, b bEntries: String, a aEntries: String) async throws -> (a: ClusterMember, b: ClusterMember) {
        let timing = ["--heartbeat-interval", "0.2", "--heartbeat-timeout", "2"]
        try cluster.folder.write("b.json", bEntries)
        let b = try await ClusterMember.launch(
            "b", folder: cluster.folder,
            arguments: ["--name", "b", "--entries", cluster.folder.path("b.json"), "--listen", "unix:\(cluster.folder.path("b.sock"))"] + timing,
            executable: NodeProcess.testNodeExecutable)
        cluster.track(b)
        try cluster.folder.write("a.json", aEntries)
        let a = try await ClusterMember.launch(
            "a", folder: cluster.folder,
            arguments: ["--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "unix:\(cluster.folder.path("a.sock"))",
                        "--peer", b.address] + timing,
            executable: NodeProcess.testNodeExecutable)
        cluster.track(a)
        return (a, b)
    }
    /// The pair with b providing the clock and a running the greeter, with its `busy` plugin (a 3 s
    /// block of `CordisActor`) disabled until the test enables it.
    static func startBusyPair(_ cluster: TestCluster) async throws -> (a: ClusterMember, b: ClusterMember) {
        try await startPair(
            cluster, b: #"{"version": 1, "entries": [{"id": "clock", "plugin": "clock"}]}"#,
            a: #"""
            {"version": 1, "entries": [
              {"id": "greeter", "plugin": "greeter"},
              {"id": "busy", "plugin": "busy", "config": {"seconds": 3}, "disabled": true}]}
            """#)
    }

    /// The test node's `gone` provider fails every call at once with `withdrawn` (a proxy of a member
    /// life that ended does) while staying registered, and `gone-consumer` calls it in `apply`. The fiber
    /// used to load again at once, for ever, in one job of `CordisActor`: the node answered nothing (in
    /// the etcd SIGSTOP test, a status request went unanswered and the node's lease ran out).
    @Test("A consumer whose provider fails every call at once with withdrawn leaves its node answering: it retries spaced out, and loads once the provider serves")
    func withdrawnLoadKeepsTheNodeAnswering() async throws {
        try await TestCluster.run { cluster in
            try cluster.folder.write("a.json", #"""
                {"version": 1, "entries": [
                  {"id": "gone", "plugin": "gone", "config": {"serving": false}},
                  {"id": "consumer", "plugin": "gone-consumer"}]}
                """#)
            let a = try await ClusterMember.launch(
                "a", folder: cluster.folder,
                arguments: ["--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "unix:\(cluster.folder.path("a.sock"))"]
                    + ClusterMember.timing,
                executable: NodeProcess.testNodeExecutable)
            cluster.track(a)
            let console = try await cluster.control(a)
            #expect(try await console.fiber(ofEntry: "consumer")?["state"]?.stringValue == "pending")
            // Tried again after 50 ms, then 100 ms: spaced out, not thousands of times at once.
            try #require(await a.waitForLine(containing: "gone-consumer: attempt 3"))
            #expect(!a.process.text.contains("gone-consumer: attempt 20"), "\(a.process.text.occurrences(of: "attempt")) attempts")
            #expect(try await console.fiber(ofEntry: "consumer")?["state"]?.stringValue == "pending")
            // The provider serves (a new life of it): the consumer loads at once.
            _ = try await console.request(.config, args: ["entry": "gone", "config": ["serving": true]])
            #expect(try await console.awaitFiber(ofEntry: "consumer", inState: "active") != nil)
            #expect(await a.waitForLine(containing: "gone-consumer: loaded"))
        }
    }

    /// Handshakes run off `CordisActor`: a console dialling while a plugin blocks b's actor for 3 s is
    /// through its handshake within a second (its own timeout), and served once the actor is free.
    @Test("A console's handshake completes within 1 s while a plugin blocks the node's CordisActor for 3 s")
    func handshakeWhileTheActorIsBusy() async throws {
        try await TestCluster.run { cluster in
            let (a, _) = try await Self.startBusyPair(cluster)
            let console = try await cluster.control(a)
            // The request is served on a's actor: sent without waiting for the answer.
            let enable = Task { try await console.request(.enable, args: ["entry": "busy"], timeout: .seconds(30)) }
            try #require(await a.waitForLine(containing: "busy: blocking"))
            let loop = try EventLoop(name: "dialler")
            defer { Task { await loop.shutdown() } }
            let identity = PeerIdentity(role: .console, name: "late", incarnation: "late-1")
            let started = ContinuousClock.now
            let link = try await Link.connect(
                to: try Address(parsing: a.address), on: loop, configuration: HandshakeConfiguration(identity: identity, secrets: nil),
                options: LinkOptions(handshakeTimeout: .seconds(1)))
            let took = ContinuousClock.now - started
            #expect(!a.process.text.contains("busy: done"), "the actor was free before the handshake ended")
            #expect(took < .seconds(1))
            try link.enqueue(.request(ControlRequest(id: 1, command: .status)))
            var answered = false
            for try await message in link.messages {
                if case .response(let response) = message, response.id == 1 {
                    answered = true
                    break
                }
            }
            #expect(answered)
            #expect(await a.waitForLine(containing: "busy: done", timeout: .seconds(20)))
            _ = try? await enable.value
            link.close()
        }
    }

    /// A console sends a change and closes its link while a's `busy` plugin blocks `CordisActor` for 3 s:
    /// when the actor is free the link is already closed, nobody is left to answer, and the change is not
    /// made. It is audited as refused. (Consoles closed for not reading, with hundreds of requests
    /// queued, used to keep the node running them for seconds before anyone else was answered.)
    @Test("A change whose console closed its link before the change started is not made, and is audited as refused")
    func changeOfAClosedLinkIsNotMade() async throws {
        try await TestCluster.run { cluster in
            try cluster.folder.write("a.json", #"""
                {"version": 1, "entries": [
                  {"id": "clock", "plugin": "clock"},
                  {"id": "busy", "plugin": "busy", "config": {"seconds": 3}, "disabled": true}]}
                """#)
            let a = try await ClusterMember.launch(
                "a", folder: cluster.folder,
                arguments: ["--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "unix:\(cluster.folder.path("a.sock"))"],
                executable: NodeProcess.testNodeExecutable)
            cluster.track(a)
            let admin = try await cluster.control(a)
            let enable = Task { try await admin.request(.enable, args: ["entry": "busy"], timeout: .seconds(30)) }
            try #require(await a.waitForLine(containing: "busy: blocking"))
            let loop = try EventLoop(name: "leaving")
            defer { Task { await loop.shutdown() } }
            let link = try await Link.connect(
                to: try Address(parsing: a.address), on: loop,
                configuration: HandshakeConfiguration(identity: PeerIdentity(role: .console, name: "leaving", incarnation: "leaving-1"), secrets: nil))
            try link.enqueue(.request(ControlRequest(id: 1, command: .disable, args: ["entry": "clock"])))
            link.close(reason: "leaving")
            #expect(!a.process.text.contains("busy: done"), "the actor was free before the console left")
            try #require(await a.waitForLine(containing: "busy: done", timeout: .seconds(20)))
            _ = try await enable.value
            let refusal = await a.waitForLine(containing: "disable entry clock: the link of leaving closed before the request started")
            #expect(refusal, "\(a.process.text.suffix(1500))")
            #expect(try await admin.fiber(ofEntry: "clock")?["state"]?.stringValue == "active")
            #expect(!a.process.text.lines(containing: "via console leaving").contains { !$0.contains("refused") })
        }
    }

    /// Both members beat every 0.2 s and give up after 2 s of silence; a's `busy` plugin blocks a's
    /// `CordisActor` for 3 s. If a's heartbeats depended on the actor, b would declare a down after 2 s.
    @Test("A plugin blocking CordisActor for 3 s with a 2 s heartbeat timeout does not get its node declared down")
    func busyActorKeepsTheLink() async throws {
        try await TestCluster.run { cluster in
            let (a, b) = try await Self.startBusyPair(cluster)
            let console = try await cluster.control(b)
            try #require(try await console.awaitFiber(ofEntry: "clock", inState: "active") != nil)
            try #require(await a.waitForLine(containing: "hello at"))

            // The console's request is served on a's actor too: sent without waiting for the answer.
            let consoleOfA = try await cluster.control(a)
            let enable = Task { try await consoleOfA.request(.enable, args: ["entry": "busy"], timeout: .seconds(30)) }
            try #require(await a.waitForLine(containing: "busy: blocking"))
            try #require(await a.waitForLine(containing: "busy: done", timeout: .seconds(20)))
            _ = try? await enable.value

            // After the 3 s block: neither side gave the other up, and b still lists a as reachable.
            #expect(!b.process.text.contains("no heartbeat from a"))
            #expect(!a.process.text.contains("no heartbeat from b"))
            #expect(!b.process.text.contains("link to a lost"))
            let members = try await console.request(.members)
            let memberA = members["members"]?.arrayValue?.first { $0["name"]?.stringValue == "a" }
            #expect(memberA?["reachable"]?.boolValue == true)
        }
    }

    /// A console dials a while a's `busy` plugin blocks `CordisActor` for 3 s (with a 2 s heartbeat
    /// timeout). a accepts connections on the actor, so this one waits in its listener until the block
    /// ends; then it is admitted, answered, and kept through a's next heartbeats: the wait is not counted
    /// as the console's silence. (The in-process test "A link adopted later than the heartbeat timeout
    /// …" covers a handshake that completes before a busy actor takes the link into use.)
    @Test("A console that dials a node while its CordisActor is blocked for 3 s, with a 2 s heartbeat timeout, gets in after the block and keeps its link")
    func linkUpDuringBusyActorStays() async throws {
        try await TestCluster.run { cluster in
            let (a, _) = try await Self.startBusyPair(cluster)
            try #require(await a.waitForLine(containing: "hello at"))
            let consoleOfA = try await cluster.control(a)
            let enable = Task { try await consoleOfA.request(.enable, args: ["entry": "busy"], timeout: .seconds(30)) }
            try #require(await a.waitForLine(containing: "busy: blocking"))

            // The late console: a raw link, whose pongs this test reads (a's pings are answered on the
            // link's loop thread, as any link's are).
            let loop = try EventLoop(name: "late-console")
            defer { Task { await loop.shutdown() } }
            let link = try await Link.connect(
                to: try Address(parsing: a.address), on: loop,
                configuration: HandshakeConfiguration(
                    identity: PeerIdentity(role: .console, name: "late-console", incarnation: UUID().uuidString), secrets: nil),
                options: LinkOptions(deliversPongs: true))
            defer { link.close() }
            try #require(await a.waitForLine(containing: "busy: done", timeout: .seconds(20)))
            _ = try? await enable.value

            // Answered: a took the link into use, and beats for it every 0.2 s from then on.
            var messages = link.messages.makeAsyncIterator()
            try link.enqueue(.request(ControlRequest(id: 1, command: .status)))
            var answered = false
            for _ in 0..<16 where !answered {
                guard case .response(let response)? = try await messages.next() else { continue }
                answered = response.id == 1
            }
            try #require(answered, "a never answered the late console's status request")
            // Round trips of the test's own pings for the next 1.2 s, six of a's beats: a link a closed
            // ends them with its goodbye or its end.
            let since = ContinuousClock.now
            var trips = 0
            while ContinuousClock.now - since < .milliseconds(1200), trips < 100_000 {
                trips += 1
                try link.enqueue(.ping(id: trips))
                var ponged = false
                while !ponged {
                    guard let message = try await messages.next() else { break }
                    if case .pong(let id) = message, id == trips { ponged = true }
                }
                try #require(ponged, "a closed the late console's link \(ContinuousClock.now - since) after answering it")
            }
            #expect(!a.process.text.contains("no heartbeat from late-console"))
            #expect(!link.connection.isClosed)
        }
    }

    /// A node serves each call in the loop turn that read it, on its event loop thread: b's `stall`
    /// provider blocks that thread for 3 s while both members beat every 0.2 s and give up after 2 s.
    /// The loop's standby thread must take the loop over, or b would neither answer a's heartbeats nor
    /// send its own, and each would declare the other down.
    @Test("A provider blocking the thread that serves its call for 3 s with a 2 s heartbeat timeout does not get its node declared down")
    func blockingProviderKeepsTheLink() async throws {
        try await TestCluster.run { cluster in
            let (a, b) = try await Self.startPair(
                cluster, b: #"{"version": 1, "entries": [{"id": "stall", "plugin": "stall"}]}"#,
                a: #"{"version": 1, "entries": []}"#)
            let console = try await cluster.control(a)
            try #require(await console.awaitStatus("a proxy for b's stall") { $0.fibers(plugin: "remote:stall").count == 1 })

            let answer = try await console.request(
                .call, args: ["service": "stall", "method": "block", "args": .object(["_0": .double(3)])], timeout: .seconds(30))
            #expect(answer.doubleValue == 3)
            // b wrote the line before it answered, but the answer can reach this test before the thread
            // draining b's output has read it.
            #expect(await b.waitForLine(containing: "stall: done"))
            #expect(!b.process.text.contains("no heartbeat from a"))
            #expect(!a.process.text.contains("no heartbeat from b"))
            #expect(!a.process.text.contains("link to b lost"))
            let members = try await console.request(.members)
            let memberB = members["members"]?.arrayValue?.first { $0["name"]?.stringValue == "b" }
            #expect(memberB?["reachable"]?.boolValue == true)
        }
    }

    /// A consumer's code goes on, after a remote call returns, on the thread that received the answer
    /// (the node's event loop thread) until it next suspends: a's `stall-after-call` plugin blocks that
    /// thread for 3 s after its call to b's clock. The loop's standby thread must take a's loop over, or
    /// a would neither answer b's heartbeats nor send its own.
    @Test("A consumer blocking for 3 s right after a remote call, with a 2 s heartbeat timeout, does not get its node declared down")
    func consumerBlockingAfterACallKeepsTheLink() async throws {
        try await TestCluster.run { cluster in
            let (a, b) = try await Self.startPair(
                cluster, b: #"{"version": 1, "entries": [{"id": "clock", "plugin": "clock"}]}"#,
                a: #"""
                {"version": 1, "entries": [{"id": "staller", "plugin": "stall-after-call", "config": {"seconds": 3}}]}
                """#)
            try #require(await a.waitForLine(containing: "stall-after-call: blocking"))
            try #require(await a.waitForLine(containing: "stall-after-call: done", timeout: .seconds(20)))

            #expect(!b.process.text.contains("no heartbeat from a"))
            #expect(!a.process.text.contains("no heartbeat from b"))
            #expect(!b.process.text.contains("link to a lost"))
            let console = try await cluster.control(b)
            let members = try await console.request(.members)
            let memberA = members["members"]?.arrayValue?.first { $0["name"]?.stringValue == "a" }
            #expect(memberA?["reachable"]?.boolValue == true)
        }
    }
}

import CordisWire
import Testing

/// `TrafficCounter`: what each message counts as, and a link counting what it sends and receives,
/// heartbeats answered on the loop thread included.
@Suite("Traffic counting: messages by kind, on both ends of a link")
struct TrafficCounterTests {
    @Test("every message type counts as its kind")
    func kinds() {
        let provider = ServiceProvider(service: "clock", realm: nil, node: "b", fiber: 3, life: 1)
        let cases: [(WireMessage, TrafficCounter.Kind)] = [
            (.ping(id: 1), .heartbeat), (.pong(id: 1), .heartbeat),
            (.members([]), .membership), (.goodbye(reason: nil), .membership),
            (.withdraw(provider), .announcement), (.withdrawAck(provider), .announcement),
            (.cancel(id: 1), .call), (.result(RemoteResult(id: 1, value: 1)), .call),
            (.request(ControlRequest(id: 1, command: "status")), .control),
            (.unknown(type: "later", body: [:]), .other),
        ]
        for (message, kind) in cases {
            #expect(TrafficCounter.Kind(message) == kind, "\(message.type)")
        }
    }

    @Test("a link counts the messages it sends and receives, the ping it answers and the goodbye it sends")
    func linkCounts() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .unix(path: try temporaryFolder() + "/t.sock"))
        let serverCounter = TrafficCounter()
        let clientCounter = TrafficCounter()
        let serverTask = Task {
            let connection = try await accept(listener)
            return try await Link.establish(
                connection, side: .responder, configuration: LinkTests.configuration("b", secrets: nil),
                options: LinkOptions(traffic: serverCounter))
        }
        let client = try await withDeadline("client handshake") {
            try await Link.connect(
                to: listener.address, on: loop, configuration: LinkTests.configuration("a", secrets: nil),
                options: LinkOptions(traffic: clientCounter))
        }
        let server = try await withDeadline("server handshake") { try await serverTask.value }
        try await client.send(.ping(id: 1))
        try await client.send(LinkTests.call(1))
        #expect(try await withDeadline("the call") { try await nextMessage(server) } == LinkTests.call(1))
        // The server answered the ping on the loop thread before the call reached it; its result comes
        // after the pong on the same stream.
        try await server.send(.result(RemoteResult(id: 1, value: 7)))
        #expect(try await withDeadline("the result") { try await nextMessage(client) } == .result(RemoteResult(id: 1, value: 7)))
        client.close(reason: "done")
        #expect(try await withDeadline("goodbye") { try await nextMessage(server) } == .goodbye(reason: "done"))
        let sentByClient = clientCounter.snapshot
        #expect(sentByClient.sent == [.heartbeat: 1, .call: 1, .membership: 1])
        #expect(sentByClient.received == [.heartbeat: 1, .call: 1])
        let seenByServer = serverCounter.snapshot
        #expect(seenByServer.sent == [.heartbeat: 1, .call: 1])
        #expect(seenByServer.received == [.heartbeat: 1, .call: 1, .membership: 1])
    }
}

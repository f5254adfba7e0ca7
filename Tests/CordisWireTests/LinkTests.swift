import CordisWire

#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing

@Suite("Link")
struct LinkTests {
    static let secretA = try! ClusterSecrets(proving: ClusterSecret(bytes: Array("a-cluster-secret-of-at-least-32-bytes!".utf8)))
    static let secretB = try! ClusterSecrets(proving: ClusterSecret(bytes: Array("another-secret-that-is-long-enough-too".utf8)))

    static func configuration(
        _ name: String, secrets: ClusterSecrets?, version: ProtocolVersion = .current
    ) -> HandshakeConfiguration {
        HandshakeConfiguration(
            identity: PeerIdentity(
                version: version, role: .node, name: name, incarnation: "\(name)-1", addresses: ["unix:/run/\(name).sock"]),
            secrets: secrets)
    }

    struct Linked {
        var loop: EventLoop
        var client: Link
        var server: Link
    }

    /// A listener, a dialling link and the accepted link, with the handshake done on both sides.
    func linked(
        tcp: Bool, secrets: ClusterSecrets?, clientOptions: LinkOptions = LinkOptions(), clientVersion: ProtocolVersion = .current,
        clientLimits: ConnectionLimits = ConnectionLimits()
    ) async throws -> Linked {
        let loop = try EventLoop()
        let address: Address = tcp ? .tcp(host: "127.0.0.1", port: 0) : .unix(path: try temporaryFolder() + "/l.sock")
        let listener = try loop.listen(on: address)
        let serverTask = Task {
            let connection = try await accept(listener)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: secrets))
        }
        let client = try await withDeadline("client handshake") {
            try await Link.connect(
                to: listener.address, on: loop, configuration: Self.configuration("a", secrets: secrets, version: clientVersion),
                limits: clientLimits, options: clientOptions)
        }
        let server = try await withDeadline("server handshake") { try await serverTask.value }
        return Linked(loop: loop, client: client, server: server)
    }

    static func call(_ id: Int) -> WireMessage {
        .call(RemoteCall(id: id, service: "clock", realm: nil, method: "now", args: [:]))
    }

    @Test("The handshake succeeds and messages flow both ways", arguments: [(false, false), (true, true), (false, true)])
    func handshakeSucceedsAndMessagesFlow(tcp: Bool, authenticated: Bool) async throws {
        let link = try await linked(tcp: tcp, secrets: authenticated ? Self.secretA : nil)
        defer { Task { await link.loop.shutdown() } }
        #expect(link.client.peer.name == "b")
        #expect(link.server.peer.name == "a")
        #expect(link.server.peer.incarnation == "a-1")
        #expect(link.server.peer.addresses == ["unix:/run/a.sock"])
        #expect(link.server.handshake.isAuthenticated == authenticated)
        if !tcp { #expect(link.server.peerUID == getuid()) } else { #expect(link.server.peerUID == nil) }
        for id in 0..<50 { try await link.client.send(Self.call(id)) }
        try await link.server.send(.result(RemoteResult(id: 1, value: 42)))
        let (calls, result) = try await withDeadline("messages") {
            var ids: [Int] = []
            var messages = link.server.messages.makeAsyncIterator()
            for _ in 0..<50 {
                guard case .call(let call)? = try await messages.next() else { break }
                ids.append(call.id)
            }
            var replies = link.client.messages.makeAsyncIterator()
            return (ids, try await replies.next())
        }
        #expect(calls == Array(0..<50))
        #expect(result == .result(RemoteResult(id: 1, value: 42)))
        link.client.close(reason: "done")
        let goodbye = try await withDeadline("goodbye") { try await nextMessage(link.server) }
        #expect(goodbye == .goodbye(reason: "done"))
        // Nothing is sealed after the goodbye: a send is refused, a second close says nothing more.
        var refused: TransportError?
        do { try link.client.enqueue(Self.call(99)) } catch { refused = error }
        #expect(refused?.code == .closed)
        link.client.close(reason: "again")
        let end = try await withDeadline("end") { try await nextMessage(link.server) }
        #expect(end == nil)
    }

    @Test("A message refused as larger than the whole outbound buffer spends no sequence number: the next one arrives")
    func refusedSendSpendsNothing() async throws {
        // An outbound buffer below the frame limit: a message can fit the one and not the other.
        let link = try await linked(tcp: false, secrets: Self.secretA, clientLimits: ConnectionLimits(outboundBufferBytes: 4096))
        defer { Task { await link.loop.shutdown() } }
        let big = WireMessage.call(RemoteCall(
            id: 1, service: "clock", realm: nil, method: "now", args: ["pad": .string(String(repeating: "x", count: 8000))]))
        var refused: TransportError?
        do { try link.client.enqueue(big) } catch { refused = error }
        #expect(refused?.code == .tooLarge)
        try link.client.enqueue(Self.call(2))
        let next = try await withDeadline("the next message") { try await nextMessage(link.server) }
        #expect(next == Self.call(2))
    }

    @Test("A wrong secret is rejected on both sides")
    func wrongSecretIsRejected() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        let serverTask = Task {
            let connection = try await accept(listener)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: Self.secretB))
        }
        let clientError = try await withDeadline("client refused") { () -> (any Error)? in
            do {
                _ = try await Link.connect(to: listener.address, on: loop, configuration: Self.configuration("a", secrets: Self.secretA))
                return nil
            } catch { return error }
        }
        let serverError = try await withDeadline("server refused") { () -> (any Error)? in
            do {
                _ = try await serverTask.value
                return nil
            } catch { return error }
        }
        let client = try #require(clientError as? WireError)
        #expect(client.code == .rejected)
        #expect(client.message.contains("authentication failed"))
        let server = try #require(serverError as? WireError)
        #expect(server.code == .badMAC)
    }

    @Test("A peer without the secret is refused by a side that requires it")
    func missingSecretIsRefused() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        let serverTask = Task {
            let connection = try await accept(listener)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: Self.secretA))
        }
        await #expect(throws: WireError.self) {
            _ = try await withDeadline("client refused") {
                try await Link.connect(to: listener.address, on: loop, configuration: Self.configuration("a", secrets: nil))
            }
        }
        await #expect(throws: WireError.self) { _ = try await withDeadline("server refused") { try await serverTask.value } }
    }

    /// The outcome `Link.startHandshake` calls back with for the next connection `listener` accepts.
    static func startedHandshake(on listener: Listener, secrets: ClusterSecrets?) async throws -> Result<Link, any Error> {
        let connection = try await accept(listener)
        return await withCheckedContinuation { continuation in
            Link.startHandshake(connection, side: .responder, configuration: configuration("b", secrets: secrets)) {
                continuation.resume(returning: $0)
            }
        }
    }

    @Test("startHandshake calls back once with the link, or with the error after the refusal was sent")
    func startedHandshakes() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        // Up: the link the callback gets is established and carries messages.
        let accepted = Task { try await Self.startedHandshake(on: listener, secrets: Self.secretA) }
        let client = try await withDeadline("client handshake") {
            try await Link.connect(to: listener.address, on: loop, configuration: Self.configuration("a", secrets: Self.secretA))
        }
        let server = try await withDeadline("callback") { try await accepted.value }.get()
        #expect(server.peer.name == "a")
        #expect(server.handshake.isAuthenticated)
        try await client.send(Self.call(7))
        #expect(try await withDeadline("call") { try await nextMessage(server) } == Self.call(7))
        client.close(reason: "done")
        // Refused: the callback tells the error, and the peer still gets its `reject`.
        let refused = Task { try await Self.startedHandshake(on: listener, secrets: Self.secretB) }
        let clientError = try await withDeadline("client refused") { () -> (any Error)? in
            do {
                _ = try await Link.connect(to: listener.address, on: loop, configuration: Self.configuration("a", secrets: Self.secretA))
                return nil
            } catch { return error }
        }
        #expect((clientError as? WireError)?.code == .rejected, "\(String(describing: clientError))")
        let outcome = try await withDeadline("callback") { try await refused.value }
        guard case .failure(let error) = outcome else {
            Issue.record("a refused handshake called back with a link")
            return
        }
        #expect((error as? WireError)?.code == .badMAC, "\(error)")
    }

    /// A relay between a client and a server that passes frames through `alter` from client to server.
    func relayed(
        secrets: ClusterSecrets?, alter: @escaping @Sendable (Int, [UInt8]) -> [[UInt8]]
    ) async throws -> (EventLoop, Task<Link, any Error>, Task<Link, any Error>) {
        let loop = try EventLoop()
        let server = try loop.listen(on: .unix(path: try temporaryFolder() + "/s.sock"))
        // The relay's own connections run no handshake: no deadline to race.
        let relay = try loop.listen(
            on: .unix(path: try temporaryFolder() + "/r.sock"), options: ListenerOptions(limits: ConnectionLimits().withoutHandshakeDeadline))
        let serverLink = Task {
            let connection = try await accept(server)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: secrets))
        }
        Task {
            let inbound = try await accept(relay)
            let outbound = try await loop.connect(to: server.address, limits: ConnectionLimits().withoutHandshakeDeadline)
            inbound.markEstablished()
            outbound.markEstablished()
            Task {
                for try await frame in outbound.frames { try await inbound.send(frame) }
                inbound.close()
            }
            var index = 0
            for try await frame in inbound.frames {
                for forwarded in alter(index, frame) { try await outbound.send(forwarded) }
                index += 1
            }
            outbound.close()
        }
        let clientLink = Task {
            try await Link.connect(to: relay.address, on: loop, configuration: Self.configuration("a", secrets: secrets))
        }
        return (loop, clientLink, serverLink)
    }

    @Test("A tampered frame after the handshake closes the link", arguments: ["tamper", "replay"])
    func tamperedFrameClosesTheLink(attack: String) async throws {
        // The initiator's frames: hello, proof, then the first sealed message.
        let (loop, clientTask, serverTask) = try await relayed(secrets: Self.secretA) { index, frame in
            guard index == 2 else { return [frame] }
            if attack == "replay" { return [frame, frame] }
            var altered = frame
            altered[altered.count - 3] ^= 0x01
            return [altered]
        }
        defer { Task { await loop.shutdown() } }
        let client = try await withDeadline("client handshake") { try await clientTask.value }
        let server = try await withDeadline("server handshake") { try await serverTask.value }
        try await client.send(.call(RemoteCall(id: 1, service: "clock", realm: nil, method: "now", args: [:])))
        let reason = try await withDeadline("server closes") { await server.closed() }
        #expect(reason?.code == .protocolViolation)
        if attack == "tamper" {
            #expect(reason?.message.contains("bad-mac") == true)
        } else {
            #expect(reason?.message.contains("replay") == true)
        }
        if attack == "replay" {
            // The first copy was genuine and was delivered before the replay closed the link.
            let first = try await withDeadline("genuine message") { try await nextMessage(server) }
            #expect(first == Self.call(1))
        }
    }

    @Test("Pings are answered on the loop thread while the consumer is not reading")
    func pingsAreAnsweredWhileConsumerIsNotReading() async throws {
        let link = try await linked(tcp: true, secrets: Self.secretA, clientOptions: LinkOptions(deliversPongs: true))
        defer { Task { await link.loop.shutdown() } }
        // The server's consumer never iterates its messages.
        for id in 1...3 { try await link.client.send(.ping(id: id)) }
        let pongs = try await withDeadline("pongs") {
            var replies = link.client.messages.makeAsyncIterator()
            var ids: [Int] = []
            for _ in 1...3 {
                guard case .pong(let id)? = try await replies.next() else { break }
                ids.append(id)
            }
            return ids
        }
        #expect(pongs == [1, 2, 3])
        #expect(link.server.connection.bufferedOutboundBytes == 0)
    }

    @Test("Answers go to the call table on the loop thread, unread by the consumer; other messages stay in order")
    func answersGoToTheCallTableOnTheLoopThread() async throws {
        let link = try await linked(tcp: false, secrets: Self.secretA)
        defer { Task { await link.loop.shutdown() } }
        let table = PendingCalls(timers: link.loop)
        link.client.deliverAnswers(to: table)
        let client = link.client
        let caller = Task {
            try await table.call(CallRequest(service: "clock", realm: nil, method: "now", args: [:])) {
                try client.enqueue($0)
            }
        }
        let received = try await withDeadline("the call") { try await nextMessage(link.server) }
        guard case .call(let call)? = received else {
            Issue.record("expected the call, got \(String(describing: received))")
            return
        }
        try await link.server.send(Self.call(7))
        try await link.server.send(.result(RemoteResult(id: call.id + 100, value: "nobody waits")))
        try await link.server.send(.error(RemoteError(id: nil, code: "failed", message: "about no call")))
        try await link.server.send(.result(RemoteResult(id: call.id, value: 42)))
        // The client's consumer has read nothing yet: the answer reached the caller on the loop thread.
        let value = try await withDeadline("the answer") { try await caller.value }
        #expect(value.value == 42)
        #expect(table.count == 0)
        let rest = try await withDeadline("the other messages") {
            var messages = link.client.messages.makeAsyncIterator()
            return [try await messages.next(), try await messages.next()]
        }
        #expect(rest == [Self.call(7), .error(RemoteError(id: nil, code: "failed", message: "about no call"))])
    }

    @Test("A reader waiting uninterruptibly gets each message and the end; cancelling its task does not cut the wait short")
    func uninterruptibleReaderIsNotCutShort() async throws {
        let link = try await linked(tcp: false, secrets: nil)
        defer { Task { await link.loop.shutdown() } }
        let server = link.server
        let reader = Task { try await server.nextMessageUninterruptibly() }
        for _ in 0..<1_000_000 where !server.connection.hasWaitingConsumer { await Task.yield() }
        #expect(server.connection.hasWaitingConsumer)
        reader.cancel()
        try await link.client.send(Self.call(7))
        let first = try await withDeadline("the waiting reader gets the message") { try await reader.value }
        #expect(first == Self.call(7))
        // A task cancelled before it waits throws at once.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await server.nextMessageUninterruptibly()
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        // A message already queued is handed over without waiting, and an orderly close ends the reader.
        try await link.client.send(Self.call(8))
        link.client.close(reason: "done")
        let rest = try await withDeadline("the queued messages and the end") {
            var messages: [WireMessage] = []
            while let message = try await server.nextMessageUninterruptibly() { messages.append(message) }
            return messages
        }
        #expect(rest == [Self.call(8), .goodbye(reason: "done")])
    }

    @Test("An unknown message type gets an error reply, its code spelled for the peer's version, and the link stays up", arguments: [
        ("1.5", "unknown-type"), ("1.4", "unknownType"), ("1.2", "unknownType"),
    ])
    func unknownTypeGetsErrorReply(version: String, code: String) async throws {
        let link = try await linked(tcp: false, secrets: Self.secretA, clientVersion: try #require(ProtocolVersion(version)))
        defer { Task { await link.loop.shutdown() } }
        let strange = try WireMessage(frame: Frame(payload: bytes(#"{"type":"frobnicate","x":1}"#)))
        try await link.client.send(strange)
        let reply = try await withDeadline("error reply") { try await nextMessage(link.client) }
        guard case .error(let error)? = reply else {
            Issue.record("expected an error reply, got \(String(describing: reply))")
            return
        }
        #expect(error.code == code)
        #expect(error.message.contains("frobnicate"))
        try await link.client.send(Self.call(9))
        let next = try await withDeadline("next message") { try await nextMessage(link.server) }
        #expect(next == Self.call(9))
    }

    @Test("A message other than the handshake's next one closes the link")
    func messageBeforeHandshakeClosesTheLink() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .unix(path: try temporaryFolder() + "/h.sock"))
        let serverTask = Task {
            let connection = try await accept(listener)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: nil))
        }
        let raw = try await loop.connect(to: listener.address)
        try await raw.send(WireMessage.ping(id: 1).encoded)
        let serverError = try await withDeadline("server refuses") { () -> (any Error)? in
            do {
                _ = try await serverTask.value
                return nil
            } catch { return error }
        }
        #expect((serverError as? WireError)?.code == .unexpectedMessage)
        let (reject, end) = try await withDeadline("raw peer sees reject and close") {
            var frames = raw.frames.makeAsyncIterator()
            return (try await frames.next(), try await frames.next())
        }
        let rejection = try WireMessage(frame: Frame(payload: try #require(reject)))
        guard case .reject(let reason) = rejection else {
            Issue.record("expected reject, got \(rejection)")
            return
        }
        #expect(reason.code == "unexpectedMessage")
        #expect(end == nil)
    }

    @Test("Malformed JSON after the handshake closes the link")
    func malformedJSONClosesTheLink() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .unix(path: try temporaryFolder() + "/m.sock"))
        let serverTask = Task {
            let connection = try await accept(listener)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: nil))
        }
        let raw = try await loop.connect(to: listener.address)
        let hello = Hello(
            identity: PeerIdentity(role: .console, name: "raw", incarnation: "r1"),
            nonce: [UInt8](repeating: 9, count: Handshake.nonceSize), auth: .none)
        try await raw.send(WireMessage.hello(hello).encoded)
        let server = try await withDeadline("server handshake") { try await serverTask.value }
        #expect(server.peer.role == .console)
        try await raw.send(bytes(#"{"type":"call","id":1,"#))
        let reason = try await withDeadline("server closes") { await server.closed() }
        #expect(reason?.code == .protocolViolation)
        #expect(reason?.message.contains("malformed-json") == true)
    }

    @Test("A peer that sends nothing fails the handshake at its deadline")
    func silentPeerFailsHandshakeAtDeadline() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .unix(path: try temporaryFolder() + "/t.sock"))
        let raw = try await loop.connect(to: listener.address, limits: ConnectionLimits(handshakeTimeout: nil))
        let error = try await withDeadline("server gives up") { () -> (any Error)? in
            do {
                let connection = try await accept(listener)
                _ = try await Link.establish(
                    connection, side: .responder, configuration: Self.configuration("b", secrets: nil),
                    options: LinkOptions(handshakeTimeout: .milliseconds(200)))
                return nil
            } catch { return error }
        }
        #expect((error as? TransportError)?.code == .handshakeTimeout)
        let end = try await withDeadline("raw peer sees the close") { try await nextFrame(raw) }
        #expect(end == nil)
    }
}

/// The next message of a link.
func nextMessage(_ link: Link) async throws -> WireMessage? {
    var iterator = link.messages.makeAsyncIterator()
    return try await iterator.next()
}

import CCordisShim
import CordisWire
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP socket connected to `port` on the loopback, from `source` (any 127/8 address).
func rawConnect(port: UInt16, from source: String = "127.0.0.1", receiveBuffer: Int32? = nil) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TransportError(.systemError, "socket") }
    if var size = receiveBuffer {
        // Set before connecting, so the window is fixed from the start (no autotuning).
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    local.sin_port = 0
    inet_pton(AF_INET, source, &local.sin_addr)
    var remote = sockaddr_in()
    remote.sin_family = sa_family_t(AF_INET)
    remote.sin_port = port.bigEndian
    inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
    let bound = withUnsafePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    let connected = withUnsafePointer(to: &remote) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, connected == 0 else {
        close(fd)
        throw TransportError(.systemError, "cannot connect from \(source)", errno: errno)
    }
    return fd
}

/// A flag or counter shared with other threads.
final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    var current: Value { value.withLock { $0 } }
    func update(_ change: (inout Value) -> Void) { value.withLock { change(&$0) } }
}

/// A weak reference readable from other threads (a test checks that an object was freed).
final class WeakBox: @unchecked Sendable {
    private let lock = Mutex(())
    private weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
    var isFreed: Bool { lock.withLock { _ in object == nil } }
}

/// The port of a TCP listener.
func port(of listener: Listener) throws -> UInt16 {
    guard case .tcp(_, let port) = listener.address else { throw TransportError(.invalidAddress, "not TCP") }
    return port
}

/// Waits until `condition` holds or fails at the deadline. The condition is checked again after each turn
/// of `loop` (the loop that makes the change): waiting is for the loop to do something, never a sleep.
func eventually(
    _ what: String, _ seconds: Double = 10, on loop: EventLoop, _ condition: @escaping @Sendable () -> Bool
) async throws {
    try await withDeadline(what, seconds) {
        while !condition() {
            try Task.checkCancellation()
            await loop.turns.next()
        }
    }
}

@Suite("Transport: connections that have not finished their handshake")
struct TransportHostileTests {
    static let secrets = try! ClusterSecrets(proving: ClusterSecret(bytes: Array("a-cluster-secret-of-at-least-32-bytes!".utf8)))

    static func configuration(_ name: String, secrets: ClusterSecrets? = Self.secrets) -> HandshakeConfiguration {
        HandshakeConfiguration(identity: PeerIdentity(role: .node, name: name, incarnation: "\(name)-1"), secrets: secrets)
    }

    @Test("an accepted connection refuses a frame over 64 KiB before anything takes it from the listener")
    func preHandshakeFrameLimitAtAccept() async throws {
        let events = EventRecorder()
        let loop = try EventLoop(observer: events.observer)
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        let client = try await loop.connect(to: listener.address)
        // A length prefix of 100,000 bytes: over the pre-handshake limit, far under the 4 MiB one.
        try client.enqueueFramed([0x00, 0x01, 0x86, 0xA0])
        let closed = try await withDeadline("the oversized hello closes the connection", 5) {
            await events.first(.connectionClosed)
        }
        #expect(closed.error?.code == .frameTooLarge)
        let reason = try await withDeadline("the client sees the close", 5) { await client.closed() }
        _ = reason
    }

    @Test("an accepted connection stops reading after a few queued frames before its handshake")
    func preHandshakeQueueLimitAtAccept() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        let client = try await loop.connect(to: listener.address)
        let server = try await withDeadline("accept") { try await accept(listener) }
        for index in 0..<64 { try client.enqueue(bytes("frame \(index)")) }
        try await eventually("reading pauses with 64 frames queued", 5, on: loop) { server.isReadingPaused }
        #expect(server.limits.handshakeQueueFrames < 64)
    }

    @Test("a connection that closes before it is taken is dropped, not handed to the consumer")
    func closedConnectionsAreNotQueued() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        for _ in 0..<20 {
            let fd = try rawConnect(port: try port(of: listener))
            var one: UInt8 = 1
            _ = write(fd, &one, 1)
            close(fd)
        }
        try await eventually("the churned connections are gone", 5, on: loop) {
            listener.connectionCount == 0 && listener.pendingHandshakeCount == 0
        }
        let live = try await loop.connect(to: listener.address)
        try await live.send(bytes("alive"))
        let first = try await withDeadline("accept") { try await accept(listener) }
        #expect(!first.isClosed)
        #expect(text(try await withDeadline("read") { try await nextFrame(first) }) == "alive")
    }

    @Test("per source, the oldest connection that has not finished its handshake is shed for a new one")
    func pendingBoundPerSource() async throws {
        let events = EventRecorder()
        let loop = try EventLoop(observer: events.observer)
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxPendingHandshakesPerSource = 3
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let port = try port(of: listener)
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        var servers: [Connection] = []
        for _ in 0..<3 {
            fds.append(try rawConnect(port: port))
            servers.append(try await withDeadline("accept") { try await accept(listener) })
        }
        fds.append(try rawConnect(port: port))
        servers.append(try await withDeadline("accept") { try await accept(listener) })
        let oldest = servers[0]
        let reason = try await withDeadline("the oldest is shed", 5) { await oldest.closed() }
        #expect(reason?.code == .handshakeShed)
        #expect(servers[1...].allSatisfy { !$0.isClosed })
        _ = await events.first(.handshakeShed)
        // Another source is not affected by the first one's bound.
        fds.append(try rawConnect(port: port, from: "127.0.0.2"))
        servers.append(try await withDeadline("accept") { try await accept(listener) })
        #expect(servers[1...].allSatisfy { !$0.isClosed })
        #expect(listener.pendingHandshakeCount == 4)
    }

    @Test("when the listener's bound is reached, a connection that sent no whole frame is shed before one that did, the longest stalled first")
    func slowestIsShedFirst() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxPendingHandshakes = 3
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let silent1 = try await loop.connect(to: listener.address, limits: ConnectionLimits().withoutHandshakeDeadline)
        let s1 = try await withDeadline("accept") { try await accept(listener) }
        let talker = try await loop.connect(to: listener.address, limits: ConnectionLimits().withoutHandshakeDeadline)
        try await talker.send(bytes("hello"))
        let s2 = try await withDeadline("accept") { try await accept(listener) }
        try await eventually("the talker's frame arrived", on: loop) { s2.framesReceived > 0 }
        let silent2 = try await loop.connect(to: listener.address, limits: ConnectionLimits().withoutHandshakeDeadline)
        let s3 = try await withDeadline("accept") { try await accept(listener) }
        let silent3 = try await loop.connect(to: listener.address, limits: ConnectionLimits().withoutHandshakeDeadline)
        let s4 = try await withDeadline("accept") { try await accept(listener) }
        #expect(try await withDeadline("the oldest silent one is shed") { await s1.closed() }?.code == .handshakeShed)
        let silent4 = try await loop.connect(to: listener.address, limits: ConnectionLimits().withoutHandshakeDeadline)
        let s5 = try await withDeadline("accept") { try await accept(listener) }
        #expect(try await withDeadline("the next silent one is shed") { await s3.closed() }?.code == .handshakeShed)
        #expect(!s2.isClosed, "the connection that sent frames is kept")
        #expect(!s4.isClosed && !s5.isClosed)
        _ = (silent1, talker, silent2, silent3, silent4)
    }

    @Test("among connections that sent frames, the one whose last frame is the oldest is shed")
    func stalestFramedIsShed() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxPendingHandshakes = 2
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let first = try await loop.connect(to: listener.address, limits: ConnectionLimits().withoutHandshakeDeadline)
        try await first.send(bytes("hello"))
        let s1 = try await withDeadline("accept") { try await accept(listener) }
        try await eventually("the first hello arrived", on: loop) { s1.framesReceived == 1 }
        let second = try await loop.connect(to: listener.address, limits: ConnectionLimits().withoutHandshakeDeadline)
        try await second.send(bytes("hello"))
        let s2 = try await withDeadline("accept") { try await accept(listener) }
        try await eventually("the second hello arrived", on: loop) { s2.framesReceived == 1 }
        // The first goes on with its handshake: its progress is now the latest.
        try await first.send(bytes("proof"))
        try await eventually("the first's proof arrived", on: loop) { s1.framesReceived == 2 }
        let third = try await loop.connect(to: listener.address, limits: ConnectionLimits().withoutHandshakeDeadline)
        _ = try await withDeadline("accept") { try await accept(listener) }
        #expect(try await withDeadline("the stalled second is shed") { await s2.closed() }?.code == .handshakeShed)
        #expect(!s1.isClosed)
        _ = (first, second, third)
    }

    @Test("a newcomer that has sent nothing yet outlives a flood of stalled connections that sent a few bytes, from many sources")
    func newcomerOutlivesStalledFlood() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxPendingHandshakes = 8
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let port = try port(of: listener)
        var flood: [Int32] = []
        defer { for fd in flood { close(fd) } }
        var stalled: [Connection] = []
        // Eight sources each hold one connection that sent five bytes of a frame header and stopped.
        for source in 0..<8 {
            let fd = try rawConnect(port: port, from: "127.0.1.\(source + 1)")
            let five: [UInt8] = [0, 0, 0, 16, 0x7B]
            _ = five.withUnsafeBytes { write(fd, $0.baseAddress, 5) }
            flood.append(fd)
            stalled.append(try await withDeadline("accept") { try await accept(listener) })
        }
        let newcomer = try rawConnect(port: port, from: "127.0.2.1")
        defer { close(newcomer) }
        let accepted = try await withDeadline("accept") { try await accept(listener) }
        for source in 0..<3 {
            flood.append(try rawConnect(port: port, from: "127.0.3.\(source + 1)"))
            _ = try await withDeadline("accept") { try await accept(listener) }
        }
        // Four arrivals past the bound of eight: the four that stalled longest make room.
        let firstFour = Array(stalled.prefix(4))
        try await eventually("the four longest stalled are shed", 5, on: loop) { firstFour.allSatisfy(\.isClosed) }
        #expect(!accepted.isClosed, "the newcomer is kept")
        #expect(stalled[4...].allSatisfy { !$0.isClosed })
    }

    @Test("a newcomer from the flood's own address outlives that address's stalled connections")
    func newcomerOutlivesItsSourcesFlood() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxPendingHandshakesPerSource = 4
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let port = try port(of: listener)
        var flood: [Int32] = []
        defer { for fd in flood { close(fd) } }
        var stalled: [Connection] = []
        func stall() async throws {
            let fd = try rawConnect(port: port)
            let five: [UInt8] = [0, 0, 0, 16, 0x7B]
            _ = five.withUnsafeBytes { write(fd, $0.baseAddress, 5) }
            flood.append(fd)
            stalled.append(try await withDeadline("accept") { try await accept(listener) })
        }
        for _ in 0..<4 { try await stall() }
        let newcomer = try rawConnect(port: port)
        defer { close(newcomer) }
        let accepted = try await withDeadline("accept") { try await accept(listener) }
        try await stall()
        try await stall()
        let firstThree = Array(stalled.prefix(3))
        try await eventually("the three longest stalled are shed", 5, on: loop) { firstThree.allSatisfy(\.isClosed) }
        #expect(!accepted.isClosed, "the newcomer is kept")
    }

    @Test("a flood from one source displaces its own connections, not an older one from another source")
    func floodDisplacesItsOwnSource() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxPendingHandshakes = 4
        options.maxPendingHandshakesPerSource = 100
        options.limits.handshakeTimeout = .seconds(60)
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let port = try port(of: listener)
        let quiet = try rawConnect(port: port)
        defer { close(quiet) }
        let victim = try await withDeadline("accept") { try await accept(listener) }
        var flood: [Int32] = []
        defer { for fd in flood { close(fd) } }
        var flooded: [Connection] = []
        for _ in 0..<10 {
            flood.append(try rawConnect(port: port, from: "127.0.0.2"))
            flooded.append(try await withDeadline("accept") { try await accept(listener) })
        }
        let early = Array(flooded.prefix(7))
        try await eventually("the flood sheds its own", 5, on: loop) { early.allSatisfy(\.isClosed) }
        #expect(!victim.isClosed, "the connection from the other source is kept")
    }

    @Test("on a Unix socket the source is the peer's user id")
    func unixSourceIsTheUID() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxPendingHandshakesPerSource = 2
        let listener = try loop.listen(on: .unix(path: try temporaryFolder() + "/u.sock"), options: options)
        var clients: [Connection] = []
        var servers: [Connection] = []
        for _ in 0..<3 {
            clients.append(try await loop.connect(to: listener.address))
            servers.append(try await withDeadline("accept") { try await accept(listener) })
        }
        let oldest = servers[0]
        #expect(try await withDeadline("the oldest is shed", 5) { await oldest.closed() }?.code == .handshakeShed)
        #expect(!servers[1].isClosed && !servers[2].isClosed)
        _ = clients
    }

    @Test("at the connection limit a connection still in its handshake is shed rather than the newcomer refused")
    func limitShedsPendingBeforeRefusing() async throws {
        let events = EventRecorder()
        let loop = try EventLoop(observer: events.observer)
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxConnections = 2
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let first = try await loop.connect(to: listener.address)
        let s1 = try await withDeadline("accept") { try await accept(listener) }
        let second = try await loop.connect(to: listener.address)
        let s2 = try await withDeadline("accept") { try await accept(listener) }
        let third = try await loop.connect(to: listener.address)
        let s3 = try await withDeadline("accept") { try await accept(listener) }
        #expect(try await withDeadline("the oldest is shed", 5) { await s1.closed() }?.code == .handshakeShed)
        #expect(!s2.isClosed && !s3.isClosed)
        #expect(!events.all.contains { $0.kind == .connectionLimitReached })
        _ = (first, second, third)
    }

    @Test("established links do not count against the bound of connections still in their handshake")
    func establishedDoNotCount() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.limits.handshakeTimeout = .seconds(60)
        options.maxPendingHandshakes = 2
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let server = Task {
            var links: [Link] = []
            for await connection in listener.connections {
                links.append(try await Link.establish(connection, side: .responder, configuration: Self.configuration("b")))
                if links.count == 4 { return links }
            }
            return links
        }
        var clients: [Link] = []
        for index in 0..<4 {
            clients.append(try await withDeadline("link \(index)") {
                try await Link.connect(to: listener.address, on: loop, configuration: Self.configuration("a\(index)"))
            })
        }
        let links = try await withDeadline("server links") { try await server.value }
        #expect(links.count == 4)
        try await eventually("nothing is pending", 5, on: loop) { listener.pendingHandshakeCount == 0 }
        #expect(clients.allSatisfy { !$0.connection.isClosed })
    }

    @Test("a console gets in while silent connections keep the listener full")
    func consoleGetsInDuringAFlood() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        var options = ListenerOptions()
        options.maxConnections = 32
        options.maxPendingHandshakes = 8
        // The silent connections stay until the test ends, however slow the machine.
        options.limits.handshakeTimeout = .seconds(60)
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: options)
        let port = try port(of: listener)
        let established = Shared(0)
        let server = Task {
            await withTaskGroup(of: Void.self) { group in
                for await connection in listener.connections {
                    group.addTask {
                        if (try? await Link.establish(connection, side: .responder, configuration: Self.configuration("b"))) != nil {
                            established.update { $0 += 1 }
                        }
                    }
                }
            }
        }
        defer { server.cancel() }
        let stop = Shared(false)
        let release = DispatchSemaphore(value: 0)
        let flood = Thread {
            var held: [Int32] = []
            // The flood comes from another address than the console (127.0.0.1); it is bounded so
            // it does not starve the tests running beside it.
            var attempts = 0
            while !stop.current, attempts < 1_500 {
                attempts += 1
                if let fd = try? rawConnect(port: port, from: "127.0.0.2") { held.append(fd) }
                if held.count > 200 { close(held.removeFirst()) }
            }
            release.wait()
            for fd in held { close(fd) }
        }
        flood.start()
        defer {
            stop.update { $0 = true }
            release.signal()
        }
        try await eventually("the flood fills the listener", 10, on: loop) { listener.pendingHandshakeCount >= 8 }
        let started = ContinuousClock.now
        let console = try await withDeadline("the console gets in", 10) {
            try await Link.connect(to: listener.address, on: loop, configuration: Self.configuration("console"))
        }
        let took = ContinuousClock.now - started
        #expect(console.peer.name == "b")
        print("a console got in during a flood of silent connections in \(took)")
    }
}

@Suite("Link: failures and limits")
struct LinkLimitTests {
    static let right = try! ClusterSecrets(proving: ClusterSecret(bytes: Array("a-cluster-secret-of-at-least-32-bytes!".utf8)))
    static let wrong = try! ClusterSecrets(proving: ClusterSecret(bytes: Array("another-secret-that-is-long-enough-too".utf8)))

    static func configuration(_ name: String, secrets: ClusterSecrets?) -> HandshakeConfiguration {
        HandshakeConfiguration(identity: PeerIdentity(role: .node, name: name, incarnation: "\(name)-1"), secrets: secrets)
    }

    @Test("a peer that fails authentication is answered no sooner than the failure delay")
    func failedAuthenticationIsDelayed() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        let server = Task {
            let connection = try await accept(listener)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: Self.right))
        }
        let started = ContinuousClock.now
        await #expect(throws: WireError.self) {
            _ = try await withDeadline("the stranger is refused") {
                try await Link.connect(to: listener.address, on: loop, configuration: Self.configuration("a", secrets: Self.wrong))
            }
        }
        let took = ContinuousClock.now - started
        #expect(took >= LinkOptions().failureDelay, "refused after \(took)")
        _ = await server.result
    }

    /// Two authenticated links over loopback TCP on `loop`: the dialling side "a" (with `clientOptions`)
    /// and the accepting side "b".
    static func authenticatedPair(
        on loop: EventLoop, clientOptions: LinkOptions = LinkOptions()
    ) async throws -> (client: Link, server: Link) {
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        let server = Task {
            let connection = try await accept(listener)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: Self.right))
        }
        let client = try await withDeadline("connect") {
            try await Link.connect(
                to: listener.address, on: loop, configuration: Self.configuration("a", secrets: Self.right),
                options: clientOptions)
        }
        return (client, try await withDeadline("server") { try await server.value })
    }

        @Test("a message over the frame limit fails with tooLarge and the link stays up")
    func oversizedMessageKeepsTheLinkUp() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let (client, serverLink) = try await Self.authenticatedPair(on: loop, clientOptions: LinkOptions(maxFrameSize: 1024))
        let big = WireMessage.result(RemoteResult(id: 1, value: .string(String(repeating: "x", count: 4000))))
        do {
            try await client.send(big)
            Issue.record("an oversized message was sent")
        } catch let error as TransportError {
            #expect(error.code == .tooLarge)
        }
        #expect(!client.connection.isClosed)
        try await client.send(.result(RemoteResult(id: 2, value: 2)))
        let received = try await withDeadline("the next message arrives") {
            var iterator = serverLink.messages.makeAsyncIterator()
            return try await iterator.next()
        }
        #expect(received == .result(RemoteResult(id: 2, value: 2)))
    }

    @Test("after the handshake the full frame limit applies again")
    func fullLimitAfterHandshake() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let (client, serverLink) = try await Self.authenticatedPair(on: loop)
        let big = WireMessage.result(RemoteResult(id: 1, value: .string(String(repeating: "x", count: 200_000))))
        try await client.send(big)
        for index in 0..<100 { try await client.send(.result(RemoteResult(id: index, value: 1))) }
        let count = try await withDeadline("messages arrive") {
            var iterator = serverLink.messages.makeAsyncIterator()
            var count = 0
            while count < 101, try await iterator.next() != nil { count += 1 }
            return count
        }
        #expect(count == 101)
    }

    @Test("a handshake started on a connection that already closed leaves nothing behind")
    func handshakeOnClosedConnectionIsReleased() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        var boxes: [WeakBox] = []
        do {
            let client = try await loop.connect(to: listener.address)
            let server = try await withDeadline("accept") { try await accept(listener) }
            client.close()
            _ = await server.closed()
            boxes = [WeakBox(server)]
            await #expect(throws: (any Error).self) {
                _ = try await Link.establish(server, side: .responder, configuration: Self.configuration("b", secrets: Self.right))
            }
        }
        let freed = boxes
        try await eventually("the closed connection is freed", 5, on: loop) { freed.allSatisfy(\.isFreed) }
    }

    @Test("a closed link is released: nothing the loop holds keeps it alive")
    func closedLinkIsReleased() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        let server = Task {
            let connection = try await accept(listener)
            return try await Link.establish(connection, side: .responder, configuration: Self.configuration("b", secrets: Self.right))
        }
        var boxes: [WeakBox] = []
        do {
            let client = try await withDeadline("connect") {
                try await Link.connect(to: listener.address, on: loop, configuration: Self.configuration("a", secrets: Self.right))
            }
            boxes = [WeakBox(client), WeakBox(client.connection)]
            client.close()
            _ = await client.closed()
        }
        let serverLink = try await withDeadline("server") { try await server.value }
        _ = await serverLink.closed()
        let freed = boxes
        try await eventually("the closed link is freed", 5, on: loop) { freed.allSatisfy(\.isFreed) }
    }
}

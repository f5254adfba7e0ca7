import CCordisShim
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// True when this machine has an IPv6 loopback address to bind.
let machineHasIPv6Loopback: Bool = {
    let fd = ccordis_stream_socket(AF_INET6)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return ccordis_inet_bind(fd, "::1", 0) == 0
}()

@Suite("Listener")
struct TransportListenerTests {
    /// Listens on `address`, dials the reported address, and exchanges a frame each way.
    func exchange(on address: Address, options: ListenerOptions = ListenerOptions()) async throws -> Address {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        // Raw connections that never run a handshake: no handshake deadline to race.
        var options = options
        options.limits = options.limits.withoutHandshakeDeadline
        let listener = try loop.listen(on: address, options: options)
        let bound = listener.address
        let client = try await loop.connect(to: bound, limits: ConnectionLimits().withoutHandshakeDeadline)
        let server = try await withDeadline("accept") { try await accept(listener) }
        try await client.send(bytes("hello"))
        try await server.send(bytes("world"))
        let (heard, answered) = try await withDeadline("exchange") {
            var serverFrames = server.frames.makeAsyncIterator()
            var clientFrames = client.frames.makeAsyncIterator()
            return (text(try await serverFrames.next()), text(try await clientFrames.next()))
        }
        #expect(heard == "hello")
        #expect(answered == "world")
        client.close()
        let ending = try await withDeadline("server sees the end") { try await nextFrame(server) }
        #expect(ending == nil)
        listener.close()
        return bound
    }

    @Test("A Unix listener and dialer exchange frames")
    func unixListenerAndDialerExchangeFrames() async throws {
        let folder = try temporaryFolder()
        let bound = try await exchange(on: .unix(path: folder + "/a.sock"))
        #expect(bound == .unix(path: folder + "/a.sock"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/a.sock"), "close removes the socket file")
    }

    @Test("A TCP listener on port 0 reports the real port and accepts a dial")
    func tcpListenerOnPortZeroReportsRealPort() async throws {
        let bound = try await exchange(on: .tcp(host: "127.0.0.1", port: 0))
        guard case .tcp(let host, let port) = bound else {
            Issue.record("not a TCP address: \(bound)")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(port != 0)
        #expect(bound.description == "tcp:127.0.0.1:\(port)")
    }

    @Test("A TCP listener on the IPv6 loopback works (skipped when the machine has no ::1)",
        .enabled(if: machineHasIPv6Loopback, "this machine has no IPv6 loopback address"))
    func tcpListenerOnIPv6Loopback() async throws {
        let bound = try await exchange(on: .tcp(host: "::1", port: 0))
        #expect(bound.description.hasPrefix("tcp:[::1]:"))
    }

    @Test("A host name is resolved for listening and dialling")
    func hostNameIsResolved() async throws {
        let bound = try await exchange(on: .tcp(host: "localhost", port: 0))
        guard case .tcp(let host, _) = bound else { return }
        #expect(host == "127.0.0.1" || host == "::1")
    }

    @Test("An adopted listening TCP socket is told from Unix by its address and accepts")
    func adoptedTCPSocketAccepts() async throws {
        let fd = ccordis_stream_socket(AF_INET)
        #expect(ccordis_inet_bind(fd, "127.0.0.1", 0) == 0)
        #expect(Glibc.listen(fd, 16) == 0)
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.adoptListener(fd: fd)
        #expect(!listener.address.isUnix)
        let client = try await loop.connect(to: listener.address)
        let server = try await withDeadline("accept") { try await accept(listener) }
        try await client.send(bytes("adopted"))
        let heard = try await withDeadline("read") { try await nextFrame(server) }
        #expect(text(heard) == "adopted")
    }

    @Test("Closing an adopted listener leaves the socket listening for its other holder (systemd's copy)")
    func closingAnAdoptedListenerKeepsTheSharedSocketListening() async throws {
        let kept = ccordis_stream_socket(AF_INET)
        defer { close(kept) }
        #expect(ccordis_inet_bind(kept, "127.0.0.1", 0) == 0)
        #expect(Glibc.listen(kept, 16) == 0)
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.adoptListener(fd: dup(kept))
        let address = listener.address
        let ended = Task { await nextConnection(listener) }
        listener.close()
        _ = try await withDeadline("listener closed") { await ended.value }
        // The dial is queued on the socket the other holder keeps; it accepts it there.
        let client = try await loop.connect(to: address)
        defer { client.close() }
        #expect(await onOwnThread {
            var ready = pollfd(fd: kept, events: Int16(POLLIN), revents: 0)
            return poll(&ready, 1, 5_000)
        } == 1)
        let accepted = ccordis_accept(kept)
        #expect(accepted >= 0)
        if accepted >= 0 { close(accepted) }
    }

    @Test("An adopted listening Unix socket is recognised as Unix and accepts")
    func adoptedUnixSocketAccepts() async throws {
        let path = try temporaryFolder() + "/adopt.sock"
        let fd = ccordis_stream_socket(AF_UNIX)
        #expect(ccordis_unix_bind(fd, path) == 0)
        #expect(Glibc.listen(fd, 16) == 0)
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try loop.adoptListener(fd: fd, options: ListenerOptions(policy: .everyone))
        #expect(listener.address == .unix(path: path))
        let client = try await loop.connect(to: .unix(path: path))
        let server = try await withDeadline("accept") { try await accept(listener) }
        try await client.send(bytes("adopted"))
        let heard = try await withDeadline("read") { try await nextFrame(server) }
        #expect(text(heard) == "adopted")
        #expect(server.credentials?.uid == getuid())
    }

    @Test("Adopting a descriptor that does not listen is refused")
    func adoptingNonListeningDescriptorIsRefused() throws {
        let fd = ccordis_stream_socket(AF_INET)
        defer { close(fd) }
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        #expect { try loop.adoptListener(fd: fd) } throws: { ($0 as? TransportError)?.code == .notListening }
    }

    @Test("A stale socket file left by a dead listener is reclaimed")
    func staleSocketFileIsReclaimed() async throws {
        let path = try temporaryFolder() + "/stale.sock"
        let stale = ccordis_stream_socket(AF_UNIX)
        #expect(ccordis_unix_bind(stale, path) == 0)
        #expect(Glibc.listen(stale, 1) == 0)
        close(stale)  // the file stays, nobody listens: what a killed process leaves
        #expect(FileManager.default.fileExists(atPath: path))
        let events = EventRecorder()
        let loop = try EventLoop(observer: events.observer)
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .unix(path: path))
        #expect(listener.address == .unix(path: path))
        #expect(events.all.contains { $0.kind == .staleSocketReclaimed })
        _ = try await loop.connect(to: .unix(path: path))
    }

    @Test("A Unix path where a process listens is reported in use, and left alone")
    func liveUnixSocketIsInUse() async throws {
        let path = try temporaryFolder() + "/live.sock"
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let first = try loop.listen(on: .unix(path: path))
        #expect { try loop.listen(on: .unix(path: path)) } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.code == .addressInUse && error.message.contains(path)
        }
        // The first listener still works.
        _ = try await loop.connect(to: first.address)
        _ = try await withDeadline("accept") { try await accept(first) }
    }

    @Test("A path that is not a socket is reported in use and not removed")
    func regularFileIsInUse() throws {
        let path = try temporaryFolder() + "/file.sock"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("keep".utf8)))
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        #expect { try loop.listen(on: .unix(path: path)) } throws: { ($0 as? TransportError)?.code == .addressInUse }
        #expect(FileManager.default.contents(atPath: path) == Data("keep".utf8))
    }

    @Test("A TCP port in use is reported with the address-in-use code")
    func tcpPortInUse() throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let first = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        #expect { try loop.listen(on: first.address) } throws: { ($0 as? TransportError)?.code == .addressInUse }
    }

    @Test("A Unix socket file is created with mode 0660 and the configured group")
    func unixSocketHasModeAndGroup() throws {
        let path = try temporaryFolder() + "/mode.sock"
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let group: UInt32 = 65534
        let listener = try loop.listen(on: .unix(path: path), options: ListenerOptions(socketGroup: group))
        defer { listener.close() }
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_gid == group)
    }

    @Test("Dialling an address where nobody listens is refused")
    func diallingNobodyIsRefused() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let path = try temporaryFolder() + "/none.sock"
        await #expect { _ = try await loop.connect(to: .unix(path: path)) } throws: {
            ($0 as? TransportError)?.code == .connectionRefused
        }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0))
        let address = listener.address
        listener.close()
        _ = try await withDeadline("listener closed") { await nextConnection(listener) }
        await #expect { _ = try await loop.connect(to: address) } throws: {
            ($0 as? TransportError)?.code == .connectionRefused
        }
    }

    @Test("A listener's end is heard only once its socket is closed: a dial right after it is refused")
    func endIsHeardAfterTheSocketCloses() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        for round in 0..<200 {
            let listener = try listenOutsideTheEphemeralRange(loop)
            let address = listener.address
            let ended = Task { await nextConnection(listener) }
            listener.close()
            _ = try await withDeadline("listener closed") { await ended.value }
            do {
                let connection = try await loop.connect(to: address)
                connection.close()
                Issue.record("round \(round): a dial after the listener's end was accepted")
                return
            } catch let error as TransportError {
                #expect(error.code == .connectionRefused)
            }
        }
    }

    @Test("A closed listener refuses dials even while a child forked meanwhile still holds its socket")
    func closeStopsListeningWhileAForkedChildHoldsTheSocket() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let listener = try listenOutsideTheEphemeralRange(loop)
        let address = listener.address
        // A child forked now holds a copy of the listening socket until it exits.
        let holder = try ForkedDescriptorHolder()
        defer { holder.release() }
        let ended = Task { await nextConnection(listener) }
        listener.close()
        _ = try await withDeadline("listener closed") { await ended.value }
        await #expect { _ = try await loop.connect(to: address) } throws: {
            ($0 as? TransportError)?.code == .connectionRefused
        }
    }

    /// A TCP listener on a loopback port below the kernel's ephemeral range, where it never places
    /// another test's listener on port 0 nor a dial's own end, taken from `LoopbackPorts`, which never
    /// hands a port out twice in this process: no etcd or socket activator another test starts can
    /// be given it. A dial to it after it closed can only be refused. (A port from the ephemeral range
    /// was once taken meanwhile by a listener another test opened on port 0 and the dial accepted.)
    private func listenOutsideTheEphemeralRange(_ loop: EventLoop) throws -> Listener {
        // Bounded: 20 ports; one another process took since `LoopbackPorts` checked it is skipped.
        for _ in 0..<20 {
            let port = try LoopbackPorts.free(1)[0]
            do {
                return try loop.listen(on: .tcp(host: "127.0.0.1", port: port))
            } catch let error as TransportError where error.code == .addressInUse {
                continue
            }
        }
        throw TransportError(.addressInUse, "no free loopback port below the ephemeral range after 20 tries")
    }

    @Test("Connections over the limit of established ones are closed on accept and reported")
    func connectionsOverTheLimitAreRefused() async throws {
        let events = EventRecorder()
        let loop = try EventLoop(observer: events.observer)
        defer { Task { await loop.shutdown() } }
        let listener = try loop.listen(on: .tcp(host: "127.0.0.1", port: 0), options: ListenerOptions(maxConnections: 1))
        let first = try await loop.connect(to: listener.address)
        let accepted = try await withDeadline("accept") { try await accept(listener) }
        // An established connection is never shed: the newcomer is refused. (The dialling side is
        // established too, or its own handshake deadline would close it on a slow run.)
        accepted.markEstablished()
        first.markEstablished()
        let second = try await loop.connect(to: listener.address)
        let event = try await withDeadline("refusal") { await events.first(.connectionLimitReached) }
        #expect(event.error?.code == .tooManyConnections)
        let end = try await withDeadline("second closed") { try await nextFrame(second) }
        #expect(end == nil)
        #expect(!accepted.isClosed && !first.isClosed)
    }
}

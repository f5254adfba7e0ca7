import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP server socket on 127.0.0.1 that the test drives by hand.
private struct RawServer {
    let listener: Int32
    let port: UInt16

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var small: Int32 = 4096
        setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    /// The connection a client already made (it waits in the backlog, so this does not block).
    func accept() -> Int32 { Glibc.accept(listener, nil, nil) }

    /// Closes `fd` with a reset rather than an orderly end.
    func reset(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.close(fd)
    }

    func close() { Glibc.close(listener) }
}

@Suite("A byte stream")
struct ByteStreamTests {
    @Test("carries bytes both ways and reads nil after the peer's orderly end")
    func roundTrip() async throws {
        let loop = try EventLoop()
        let server = try RawServer()
        defer { server.close() }
        let stream = try await ByteStream.connect(host: "127.0.0.1", port: server.port, on: loop, timeout: .seconds(5))
        let peer = server.accept()
        try stream.write(Array("ping".utf8))
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = Glibc.read(peer, &buffer, buffer.count)
        #expect(Array(buffer[0..<max(count, 0)]) == Array("ping".utf8))
        _ = Glibc.write(peer, "pong", 4)
        Glibc.close(peer)
        let received = try await withDeadline("the answer and the end") {
            var all: [UInt8] = []
            while let bytes = try await stream.read() { all += bytes }
            return all
        }
        #expect(received == Array("pong".utf8))
        stream.close()
        await loop.shutdown()
    }

    @Test("that failed while bytes waited to be written refuses later writes with the failure")
    func failedWhileWritesWait() async throws {
        let loop = try EventLoop()
        let server = try RawServer()
        defer { server.close() }
        let stream = try await ByteStream.connect(
            host: "127.0.0.1", port: server.port, on: loop, timeout: .seconds(5), maxBufferedBytes: 4 << 20)
        let peer = server.accept()
        // The peer never reads: fill the kernel's buffers until bytes wait in the stream's own.
        let chunk = [UInt8](repeating: 7, count: 16 << 10)
        for _ in 0..<200 where stream.bufferedOutboundBytes == 0 { try stream.write(chunk) }
        #expect(stream.bufferedOutboundBytes > 0)
        let reader = Task { try await stream.read() }
        server.reset(peer)
        await #expect(throws: TransportError.self) {
            try await withDeadline("the reset reaches the reader") { try await reader.value }
        }
        do {
            try stream.write([1])
            Issue.record("a write after the reset was accepted")
        } catch {
            #expect(error.code == .connectionReset)
        }
        stream.close()
        await loop.shutdown()
    }

    @Test("whose peer does not read ends with outboundBufferFull at its bound")
    func peerThatDoesNotRead() async throws {
        let loop = try EventLoop()
        let server = try RawServer()
        defer { server.close() }
        let stream = try await ByteStream.connect(
            host: "127.0.0.1", port: server.port, on: loop, timeout: .seconds(5), maxBufferedBytes: 64 << 10)
        let peer = server.accept()
        defer { Glibc.close(peer) }
        let chunk = [UInt8](repeating: 7, count: 16 << 10)
        var failure: TransportError?
        for _ in 0..<4096 where failure == nil {
            do { try stream.write(chunk) } catch { failure = error }
        }
        #expect(failure?.code == .outboundBufferFull)
        do {
            let bytes = try await withDeadline("the reader sees the end") { try await stream.read() }
            Issue.record("the stream did not end: \(String(describing: bytes))")
        } catch let error as TransportError {
            #expect(error.code == .outboundBufferFull)
        }
        #expect(throws: TransportError.self) { try stream.write([1]) }
        await loop.shutdown()
    }

    @Test("closed by its owner hands a waiting reader the end, and refuses writes")
    func closedByOwner() async throws {
        let loop = try EventLoop()
        let server = try RawServer()
        defer { server.close() }
        let stream = try await ByteStream.connect(host: "127.0.0.1", port: server.port, on: loop, timeout: .seconds(5))
        let peer = server.accept()
        defer { Glibc.close(peer) }
        let reader = Task { try await stream.read() }
        stream.close()
        let end = try await withDeadline("the reader sees the end") { try await reader.value }
        #expect(end == nil)
        do {
            try stream.write([1])
            Issue.record("a write after close was accepted")
        } catch {
            #expect(error.code == .closed)
        }
        await loop.shutdown()
    }
}

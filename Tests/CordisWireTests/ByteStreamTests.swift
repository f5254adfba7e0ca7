import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

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

import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("A byte stream")
struct ByteStreamTests {
    /// Runs `body` with a stream connected to a raw server, the server, and the server's end of the
    /// stream (which `body` closes); then closes the stream and stops the loop.
    private func connected(
        maxBufferedBytes: Int = 1 << 20, _ body: (ByteStream, RawServer, Int32) async throws -> Void
    ) async throws {
        let loop = try EventLoop()
        let server = try RawServer()
        defer { server.close() }
        let stream = try await ByteStream.connect(
            host: "127.0.0.1", port: server.port, on: loop, timeout: .seconds(5), maxBufferedBytes: maxBufferedBytes)
        do {
            try await body(stream, server, server.accept())
        } catch {
            stream.close()
            await loop.shutdown()
            throw error
        }
        stream.close()
        await loop.shutdown()
    }

    @Test("carries bytes both ways and reads nil after the peer's orderly end")
    func roundTrip() async throws {
        try await connected { stream, _, peer in
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
        }
    }

    @Test("that failed while bytes waited to be written refuses later writes with the failure")
    func failedWhileWritesWait() async throws {
        try await connected(maxBufferedBytes: 4 << 20) { stream, server, peer in
            // The peer never reads: fill the kernel's buffers until bytes wait in the stream's own.
            let chunk = [UInt8](repeating: 7, count: 16 << 10)
            for _ in 0..<200 where stream.bufferedOutboundBytes == 0 { try stream.write(chunk) }
            #expect(stream.bufferedOutboundBytes > 0)
            let reader = Task { try await stream.read() }
            server.reset(peer)
            await #expect(throws: TransportError.self) {
                try await withDeadline("the reset reaches the reader") { try await reader.value }
            }
            do throws(TransportError) {
                try stream.write([1])
                Issue.record("a write after the reset was accepted")
            } catch {
                #expect(error.code == .connectionReset)
            }
        }
    }

    @Test("whose peer does not read ends with outboundBufferFull at its bound")
    func peerThatDoesNotRead() async throws {
        try await connected(maxBufferedBytes: 64 << 10) { stream, _, peer in
            defer { Glibc.close(peer) }
            let chunk = [UInt8](repeating: 7, count: 16 << 10)
            var failure: TransportError?
            for _ in 0..<4096 where failure == nil {
                do throws(TransportError) { try stream.write(chunk) } catch { failure = error }
            }
            #expect(failure?.code == .outboundBufferFull)
            do {
                let bytes = try await withDeadline("the reader sees the end") { try await stream.read() }
                Issue.record("the stream did not end: \(String(describing: bytes))")
            } catch let error as TransportError {
                #expect(error.code == .outboundBufferFull)
            }
            #expect(throws: TransportError.self) { try stream.write([1]) }
        }
    }

    @Test("closed by its owner hands a waiting reader the end, and refuses writes")
    func closedByOwner() async throws {
        try await connected { stream, _, peer in
            defer { Glibc.close(peer) }
            let reader = Task { try await stream.read() }
            stream.close()
            let end = try await withDeadline("the reader sees the end") { try await reader.value }
            #expect(end == nil)
            do throws(TransportError) {
                try stream.write([1])
                Issue.record("a write after close was accepted")
            } catch {
                #expect(error.code == .closed)
            }
        }
    }
}

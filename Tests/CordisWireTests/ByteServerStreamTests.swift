import CCordisShim
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `ByteServer`'s streamed answers (the web console's server-sent events): the head and later writes
/// reach the peer as they come, the deadline no longer cuts the connection, either side's end is reported
/// once, and a peer that does not read is cut once its backlog passes the limit.
@Suite("ByteServer: streamed answers")
struct ByteServerStreamTests {
    /// A server on `loop` that opens a stream on the first line it gets, keeping it in `stream` and
    /// counting its ends in `ends`.
    static func server(
        _ loop: EventLoop, limits: ByteServer.Limits, stream: Shared<ByteServer.Stream?>, ends: Shared<Int>
    ) throws -> ByteServer {
        try ByteServer(listeningOn: .tcp(host: "127.0.0.1", port: 0), loop: loop, limits: limits) { bytes, reply in
            guard bytes.contains(0x0A) else { return .needMore }
            let opened = reply.open(Array("HEAD\n".utf8)) { ends.update { $0 += 1 } }
            stream.update { $0 = opened }
            return .answering
        }
    }

    /// Reads from the blocking `fd` until `text` has come (or the peer ends, or 10 s pass).
    static func read(_ fd: Int32, until text: String) -> String {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(text) {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    static func port(_ server: ByteServer) throws -> UInt16 {
        guard case .tcp(_, let port) = server.address else { throw TransportError(.invalidAddress, "not TCP") }
        return port
    }

    @Test("a stream's writes reach the peer after the deadline cut an idle connection, and the peer's end is reported once")
    func streamOutlivesTheDeadline() async throws {
        let loop = try EventLoop(name: "stream-test")
        let stream = Shared<ByteServer.Stream?>(nil)
        let ends = Shared(0)
        let server = try Self.server(loop, limits: ByteServer.Limits(deadline: .milliseconds(300)), stream: stream, ends: ends)
        let port = try Self.port(server)
        let streaming = try rawConnect(port: port)
        _ = "GO\n".withCString { Glibc.write(streaming, $0, 3) }
        #expect(Self.read(streaming, until: "HEAD\n") == "HEAD\n")
        try await eventually("the stream is kept", on: loop) { stream.current != nil }
        // An idle connection is cut at the deadline: once it is, the deadline has passed for the stream too.
        let idle = try rawConnect(port: port)
        #expect(Self.read(idle, until: "never") == "")
        close(idle)
        stream.current?.write(Array("one\n".utf8))
        #expect(Self.read(streaming, until: "one\n") == "one\n")
        close(streaming)
        try await eventually("the stream's end is reported", on: loop) { ends.current == 1 }
        #expect(server.connectionCount == 0)
        server.close()
        await loop.shutdown()
        #expect(ends.current == 1)
    }

    @Test("a peer that does not read is cut once more than the backlog waits for it")
    func slowReaderIsCut() async throws {
        let loop = try EventLoop(name: "stream-test")
        let stream = Shared<ByteServer.Stream?>(nil)
        let ends = Shared(0)
        let server = try Self.server(loop, limits: ByteServer.Limits(maxStreamBacklog: 64 * 1024), stream: stream, ends: ends)
        // A fixed receive buffer: with the system's autotuning (up to 32 MiB on some machines) the kernel
        // could take everything written below, and the backlog would never pass its bound.
        let fd = try rawConnect(port: try Self.port(server), receiveBuffer: 64 * 1024)
        _ = "GO\n".withCString { Glibc.write(fd, $0, 3) }
        #expect(Self.read(fd, until: "HEAD\n") == "HEAD\n")
        // The head is sent before the handler keeps the stream: wait for it (a write before went nowhere).
        try await eventually("the stream is kept", on: loop) { stream.current != nil }
        // The kernel's buffers take a few megabytes at most first; then the backlog passes 64 KiB and the peer is cut.
        let chunk = [UInt8](repeating: 0x2E, count: 32 * 1024)
        for _ in 0..<1024 { stream.current?.write(chunk) }
        try await eventually("the peer that does not read is cut", on: loop) { ends.current == 1 }
        #expect(server.connectionCount == 0)
        close(fd)
        server.close()
        await loop.shutdown()
    }
}

import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A peer that repeats a failure at will (here: hellos that do not decode) cannot flood the node's log:
/// a few lines are written, then one summary.
@Suite("Log flood")
struct LogFloodTests {
    /// Connects to the Unix socket at `path`, writes `bytes` and closes; false when it cannot connect.
    static func sendAndClose(_ bytes: [UInt8], to path: String) -> Bool {
        guard let fd = connectUnix(path) else { return false }
        defer { close(fd) }
        return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// A connected Unix socket to `path` (the caller closes it), or nil.
    static func connectUnix(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            close(fd)
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    @Test("500 hellos that do not decode write at most a few log lines about them")
    func failedHandshakesAreRateLimited() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: "[]", extra: ["--log-level", "info"])
            let console = try await cluster.control(a)
            // A frame of 8 bytes that is not JSON: the handshake fails at once.
            let junk: [UInt8] = [0, 0, 0, 8] + Array("not json".utf8)
            var sent = 0
            for _ in 0..<500 where Self.sendAndClose(junk, to: a.socket) { sent += 1 }
            #expect(sent == 500)
            // Every junk connection has been read once the node refused one hundred of them or more.
            #expect(await a.waitForLine(containing: "handshakeFailed: … and"), "\(a.process.text)")
            _ = try await console.nodeStatus()
            let lines = a.process.text.lines(containing: "handshake from").count
            #expect(lines >= 1 && lines <= 20, "\(lines) lines about failed handshakes")
        }
    }
}

extension LogFloodTests {
    @Test("300 consoles that connect and close write at most a few lines about it, then a summary")
    func consoleConnectionsAreRateLimited() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: "[]", extra: ["--log-level", "info"])
            let started = ContinuousClock.now
            for _ in 0..<300 {
                let console = try await cluster.control(a)
                await console.close()
            }
            let elapsed = ContinuousClock.now - started
            #expect(await a.waitForLine(containing: "consoleConnected: … and"), "\(a.process.text.suffix(2000))")
            // At most 10 lines per 10 s window of the node's throttle, over the windows the loop spanned (a
            // loaded machine stretches it over more than one).
            let windows = Int(elapsed / .seconds(10)) + 2
            let lines = a.process.text.lines(containing: "console ").count
            #expect(lines <= 10 * windows, "\(lines) lines about consoles in \(elapsed)")
        }
    }
}

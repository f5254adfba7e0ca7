import CordisProcessTesting
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP exchange for tests, on a thread of its own: connect to 127.0.0.1:`port`, send
/// `request`, read until the server closes or `timeout` passes.
enum RawHTTP {
    /// What came back, and whether the server closed the connection (false: the timeout ended the read).
    struct Answer: Sendable {
        var bytes: [UInt8]
        var closedByServer: Bool
        var text: String { String(decoding: bytes, as: UTF8.self) }
        /// The status code of the status line, or nil.
        var status: Int? {
            let parts = text.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1.") else { return nil }
            return Int(parts[1])
        }
        /// The head (before the blank line).
        var head: String { text.components(separatedBy: "\r\n\r\n").first ?? "" }
        /// The body (after the blank line), chunks joined when it came chunked.
        var body: String {
            let raw = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
            guard head.lowercased().contains("transfer-encoding: chunked") else { return raw }
            var rest = Substring(raw)
            var joined = ""
            while let lineEnd = rest.range(of: "\r\n"), let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 {
                let start = lineEnd.upperBound
                let utf8 = rest[start...].utf8
                guard utf8.count >= size else { break }
                let end = utf8.index(utf8.startIndex, offsetBy: size)
                joined += String(Substring(rest[start..<end]))
                rest = rest[end...].dropFirst(2)
            }
            return joined
        }
    }

    static func exchange(port: UInt16, host: String = "127.0.0.1", _ request: [UInt8], timeout: Double = 10) async -> Answer? {
        await onOwnThread { exchangeBlocking(host: host, port: port, request, timeout: timeout) }
    }

    static func get(port: UInt16, host: String = "127.0.0.1", _ path: String, timeout: Double = 10) async -> Answer? {
        await exchange(port: port, host: host, Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8), timeout: timeout)
    }

    private static func exchangeBlocking(host: String, port: UInt16, _ request: [UInt8], timeout: Double) -> Answer? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            // 0: the server closed; below 0: the timeout (EAGAIN) or a reset (the server closed too).
            let closed = count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
            return Answer(bytes: received, closedByServer: closed)
        }
    }
}

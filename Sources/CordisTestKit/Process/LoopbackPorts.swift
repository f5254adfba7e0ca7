import Foundation
import Synchronization

/// Loopback TCP ports for servers a test starts on a port of its choosing (etcd, systemd's socket
/// activator), which cannot take port 0.
public enum LoopbackPorts {
    /// Every port `free` has handed out in this process: never handed out twice, so two servers of one
    /// test (two etcd members), or two tests running at once, cannot draw the same port while neither
    /// has bound it yet.
    private static let handedOut = Mutex<Set<UInt16>>([])

    /// `count` loopback ports free right now (each bound once by this process, then released), chosen
    /// below the kernel's ephemeral range: a port the kernel hands out for an outgoing connection or a
    /// listener on port 0 (other tests' nodes and clients) is never one of these between the check
    /// and the bind of the server it is for, and none was handed out before by this process.
    public static func free(_ count: Int) throws -> [UInt16] {
        let ephemeralStart = ephemeralPortStart()
        let range: ClosedRange<UInt16> = ephemeralStart > 12_000 ? 10_000...(ephemeralStart - 1) : 1_024...9_999
        var ports: [UInt16] = []
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        for _ in 0..<200 where ports.count < count {
            let port = UInt16.random(in: range)
            guard !ports.contains(port), handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                continue
            }
            sockets.append(fd)
            ports.append(port)
        }
        guard ports.count == count else { throw POSIXError(.EADDRINUSE) }
        return ports
    }

    /// The first port of the kernel's ephemeral range (32768 when it cannot be read).
    private static func ephemeralPortStart() -> UInt16 {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
              let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
              let start = UInt16(first)
        else { return 32_768 }
        return start
    }
}

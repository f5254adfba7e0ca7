import CordisWire

#if canImport(Glibc)
import Glibc
#endif

extension Address {
    /// True for a TCP address on the wildcard host (`0.0.0.0`, `::` or another spelling of them),
    /// which other nodes cannot dial.
    var isWildcard: Bool {
        guard case .tcp(let host, _) = self else { return false }
        var bytes = [UInt8](repeating: 0xFF, count: 16)
        let v4 = bytes.withUnsafeMutableBytes { inet_pton(AF_INET, host, $0.baseAddress) }
        if v4 == 1 { return bytes.prefix(4).allSatisfy { $0 == 0 } }
        bytes = [UInt8](repeating: 0xFF, count: 16)
        let v6 = bytes.withUnsafeMutableBytes { inet_pton(AF_INET6, host, $0.baseAddress) }
        if v6 == 1 { return bytes.allSatisfy { $0 == 0 } }
        return false
    }

    /// The port of a TCP address; nil for a Unix address.
    var tcpPort: UInt16? {
        guard case .tcp(_, let port) = self else { return nil }
        return port
    }
}

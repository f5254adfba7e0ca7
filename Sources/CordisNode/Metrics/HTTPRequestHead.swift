/// The head of one HTTP/1.x request as the metrics endpoint reads it, and the pure step that reads it:
/// feed every byte received so far, get `needMore`, a request, or a refusal with its status. Nothing
/// here blocks or allocates beyond the head itself; the caller bounds how many bytes it keeps.
///
/// Accepted: a request line `METHOD SP TARGET SP HTTP/1.0|HTTP/1.1`, header lines `NAME: VALUE`, each
/// line ending in CRLF (a bare LF is accepted too), and an empty line, all within `maxHeadBytes`,
/// printable ASCII (and tabs) only; no body (`Content-Length` other than 0 or any `Transfer-Encoding`
/// is refused with 413).
struct HTTPRequestHead: Sendable, Hashable {
    /// The method, as sent (`GET`).
    var method: String
    /// The request target, as sent (`/metrics`).
    var target: String
    /// The target's path, without its query.
    var path: String {
        target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
    }

    /// What the bytes received so far make.
    enum Outcome: Sendable, Hashable {
        /// Not a whole head yet.
        case needMore
        /// A whole head.
        case request(HTTPRequestHead)
        /// A head that cannot be served: the status to answer and why.
        case refused(status: Int, reason: String)
    }

    /// The most bytes a head may take: 8 KiB.
    static let maxHeadBytes = 8 * 1024
    /// The most header lines.
    static let maxHeaderLines = 64

    /// Reads the head at the start of `bytes`.
    static func parse(_ bytes: [UInt8], maxHeadBytes: Int = maxHeadBytes) -> Outcome {
        // The end of the head: an empty line.
        var end: Int?
        var index = 0
        while index < bytes.count, index <= maxHeadBytes {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A {
                    end = index + 2
                    break
                }
                if index + 2 < bytes.count, bytes[index + 1] == 0x0D, bytes[index + 2] == 0x0A {
                    end = index + 3
                    break
                }
            }
            index += 1
        }
        guard let end, end <= maxHeadBytes else {
            if bytes.count > maxHeadBytes { return .refused(status: 431, reason: "the request head is over \(maxHeadBytes) bytes") }
            // A byte no head may hold is refused before the head is whole (no reason to wait for more).
            if let bad = bytes.firstIndex(where: { !allowed($0) }) {
                return .refused(status: 400, reason: "byte \(bytes[bad]) at offset \(bad) is not allowed in a request head")
            }
            return .needMore
        }
        if let bad = bytes[..<end].firstIndex(where: { !allowed($0) }) {
            return .refused(status: 400, reason: "byte \(bytes[bad]) at offset \(bad) is not allowed in a request head")
        }
        // Split on the bytes (as a String, CR LF would be one character).
        var lines = bytes[..<end].split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            Substring(String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self))
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { return .refused(status: 400, reason: "the request line is empty") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .refused(status: 400, reason: "the request line is not METHOD TARGET VERSION")
        }
        let method = String(parts[0])
        let target = String(parts[1])
        let version = parts[2]
        guard !method.isEmpty, method.count <= 16, method.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else {
            return .refused(status: 400, reason: "the method is not an upper-case token")
        }
        guard target.hasPrefix("/"), target.utf8.count <= 2048 else {
            return .refused(status: 400, reason: "the target is not an absolute path of at most 2048 bytes")
        }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .refused(status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are served")
        }
        let headers = lines.dropFirst()
        guard headers.count <= maxHeaderLines else {
            return .refused(status: 431, reason: "more than \(maxHeaderLines) header lines")
        }
        for line in headers {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                line[..<colon].utf8.allSatisfy(isTokenByte)
            else {
                return .refused(status: 400, reason: "a header line is not NAME: VALUE")
            }
            let name = line[..<colon].lowercased()
            var value = line[line.index(after: colon)...]
            while let first = value.first, first == " " || first == "\t" { value = value.dropFirst() }
            while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
            if name == "transfer-encoding" || (name == "content-length" && value != "0") {
                return .refused(status: 413, reason: "a request body is not accepted")
            }
        }
        return .request(HTTPRequestHead(method: method, target: target))
    }

    /// Printable ASCII, tabs and line ends.
    private static func allowed(_ byte: UInt8) -> Bool {
        (byte >= 0x20 && byte < 0x7F) || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// A byte of an HTTP token (`tchar`).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

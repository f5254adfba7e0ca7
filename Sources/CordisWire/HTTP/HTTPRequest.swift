/// One HTTP/1.x request as the node's `/metrics` endpoint and the console's web server read it, and the
/// pure step that reads it: feed every byte received so far, get `needMore`, a request, or a refusal
/// with its status. Nothing here blocks; the caller bounds how many bytes it keeps.
///
/// Accepted: a request line `METHOD SP TARGET SP HTTP/1.0|HTTP/1.1`, header lines `NAME: VALUE`, each
/// line ending in CRLF (a bare LF is accepted too), and an empty line, all within `maxHeadBytes`,
/// printable ASCII (and tabs) only; then a body of exactly `Content-Length` bytes when the caller allows
/// one (`maxBodyBytes`). A longer body, a `Content-Length` that is not one decimal number, and any
/// `Transfer-Encoding` are refused with 413 or 400.
package struct HTTPRequest: Sendable, Hashable {
    /// One header line: the name in lower case, the value without surrounding blanks.
    package struct Header: Sendable, Hashable {
        /// The name, lower-cased (`content-type`).
        package var name: String
        /// The value, as sent, trimmed.
        package var value: String

        /// A header.
        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The method, as sent (`GET`).
    package var method: String
    /// The request target, as sent (`/metrics`).
    package var target: String
    /// The header lines in order.
    package var headers: [Header]
    /// The body (empty without `Content-Length`).
    package var body: [UInt8]

    /// A request.
    package init(method: String, target: String, headers: [Header] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The target's path, without its query.
    package var path: String {
        target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
    }

    /// The value of query parameter `name` (percent-decoded, `+` read as a space), or nil.
    package func query(_ name: String) -> String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard Self.percentDecoded(parts[0]) == name else { continue }
            return parts.count == 2 ? Self.percentDecoded(parts[1]) : ""
        }
        return nil
    }

    /// The value of the first header called `name` (any case), or nil.
    package func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }

    /// What the bytes received so far make.
    package enum Outcome: Sendable, Hashable {
        /// Not a whole request yet.
        case needMore
        /// A whole request.
        case request(HTTPRequest)
        /// A request that cannot be served: the status to answer and why.
        case refused(status: Int, reason: String)
    }

    /// The most bytes a head may take: 8 KiB.
    package static let maxHeadBytes = 8 * 1024
    /// The most header lines.
    package static let maxHeaderLines = 64

    /// Reads the request at the start of `bytes`; a body is accepted up to `maxBodyBytes` (0: none).
    package static func parse(_ bytes: [UInt8], maxHeadBytes: Int = maxHeadBytes, maxBodyBytes: Int = 0) -> Outcome {
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
        let lineCount = lines.count - 1
        guard lineCount <= maxHeaderLines else {
            return .refused(status: 431, reason: "more than \(maxHeaderLines) header lines")
        }
        var headers: [Header] = []
        var length: Int?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                line[..<colon].utf8.allSatisfy(isTokenByte)
            else {
                return .refused(status: 400, reason: "a header line is not NAME: VALUE")
            }
            let name = line[..<colon].lowercased()
            var value = line[line.index(after: colon)...]
            while let first = value.first, first == " " || first == "\t" { value = value.dropFirst() }
            while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
            if name == "transfer-encoding" {
                return .refused(status: 413, reason: "a request body is accepted only with Content-Length")
            }
            if name == "content-length" {
                guard !value.isEmpty, value.utf8.count <= 12, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                      let count = Int(value), length == nil || length == count
                else {
                    return .refused(status: 400, reason: "Content-Length is not one decimal number")
                }
                guard count <= maxBodyBytes else {
                    return .refused(
                        status: 413,
                        reason: maxBodyBytes == 0 ? "a request body is not accepted" : "the body is over \(maxBodyBytes) bytes")
                }
                length = count
            }
            headers.append(Header(name: name, value: String(value)))
        }
        let bodyLength = length ?? 0
        guard bytes.count - end >= bodyLength else { return .needMore }
        return .request(HTTPRequest(method: method, target: target, headers: headers, body: Array(bytes[end..<(end + bodyLength)])))
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

    /// `text` with `%XX` escapes decoded and `+` read as a space; a broken escape is kept as it is.
    static func percentDecoded(_ text: Substring) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%"), bytes.count >= 2,
               let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) {
                out.append(value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte == UInt8(ascii: "+") ? 0x20 : byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

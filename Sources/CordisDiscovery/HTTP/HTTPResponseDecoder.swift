/// The response side of HTTP/1.1 as a pure step function: feed it the bytes read from the socket, take
/// the parts out (the head once, then body bytes as they arrive, then the end). It reads a body framed
/// by `Content-Length`, by chunked transfer coding, or by the end of the connection, and bounds
/// everything a server sends: the head, each chunk-size line, and the whole body.
///
/// No I/O: tests feed it byte by byte, whole, or in random chunks.
package struct HTTPResponseDecoder: Sendable {
    /// The status line and headers of a response.
    package struct Head: Equatable, Sendable {
        /// The status code (200...).
        package var status: Int
        /// The headers, names lower-cased, in order.
        package var headers: [(name: String, value: String)]

        /// The first value of header `name` (lower-case).
        package func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

        package static func == (lhs: Head, rhs: Head) -> Bool {
            lhs.status == rhs.status && lhs.headers.map(\.name) == rhs.headers.map(\.name)
                && lhs.headers.map(\.value) == rhs.headers.map(\.value)
        }
    }

    /// One part of a response.
    package enum Part: Equatable, Sendable {
        /// The status line and headers.
        case head(Head)
        /// Bytes of the body, as they arrived.
        case body([UInt8])
        /// The body is complete.
        case end
    }

    /// Why a response cannot be read.
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What was wrong, with the byte offset in the response where it was noticed.
        package var message: String
        package var description: String { message }
    }

    /// The longest status line plus headers accepted.
    package static let maxHeadBytes = 16 * 1024

    private enum Phase: Equatable {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    /// The largest body accepted, in bytes (a streamed body counts all its chunks).
    package let maxBodyBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var phase = Phase.head
    private var bodyBytes = 0
    private var offset = 0

    /// A decoder that accepts bodies up to `maxBodyBytes`.
    package init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    /// Whether the whole response was read.
    package var isComplete: Bool { phase == .done }

    /// Adds bytes read from the socket.
    package mutating func feed(_ bytes: [UInt8]) {
        if start > 0 && start * 2 >= buffer.count {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The connection ended: completes a body that runs until the close, fails any other unfinished one.
    package mutating func finish() throws(Failure) -> Part? {
        switch phase {
        case .done: return nil
        case .untilClose:
            phase = .done
            return .end
        default:
            throw Failure(message: "the connection closed in the middle of the response (at byte \(offset))")
        }
    }

    /// The next part, or nil when more bytes are needed.
    package mutating func next() throws(Failure) -> Part? {
        while true {
            switch phase {
            case .done:
                return nil
            case .head:
                guard let end = find([13, 10, 13, 10]) else {
                    if buffer.count - start > Self.maxHeadBytes {
                        throw Failure(message: "the response head is longer than \(Self.maxHeadBytes) bytes")
                    }
                    return nil
                }
                guard end - start <= Self.maxHeadBytes else {
                    throw Failure(message: "the response head is longer than \(Self.maxHeadBytes) bytes")
                }
                let head = try parseHead(Array(buffer[start..<end]))
                consume(end + 4 - start)
                if let encoding = head.header("transfer-encoding"), encoding.lowercased().contains("chunked") {
                    phase = .chunkSize
                } else if let length = head.header("content-length") {
                    guard let count = Int(length.trimmingSpaces), count >= 0 else {
                        throw Failure(message: "invalid Content-Length \(length)")
                    }
                    guard count <= maxBodyBytes else {
                        throw Failure(message: "the response body of \(count) bytes exceeds the limit of \(maxBodyBytes)")
                    }
                    phase = count == 0 ? .done : .fixed(remaining: count)
                    if count == 0 {
                        return .head(head)
                    }
                } else if head.status == 204 || head.status == 304 || (100..<200).contains(head.status) {
                    phase = .done
                } else {
                    phase = .untilClose
                }
                return .head(head)
            case .fixed(let remaining):
                guard start < buffer.count else { return nil }
                let take = min(remaining, buffer.count - start)
                let bytes = Array(buffer[start..<(start + take)])
                consume(take)
                phase = remaining == take ? .done : .fixed(remaining: remaining - take)
                try count(take)
                return .body(bytes)
            case .chunkSize:
                guard let end = find([13, 10]) else {
                    if buffer.count - start > 1024 { throw Failure(message: "a chunk-size line is longer than 1024 bytes") }
                    return nil
                }
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                consume(end + 2 - start)
                let digits = line.split(separator: ";", maxSplits: 1).first.map { String($0).trimmingSpaces } ?? ""
                guard !digits.isEmpty, digits.count <= 15, let size = Int(digits, radix: 16), size >= 0 else {
                    throw Failure(message: "invalid chunk size \"\(line.prefix(40))\"")
                }
                guard bodyBytes + size <= maxBodyBytes else {
                    throw Failure(message: "the response body exceeds the limit of \(maxBodyBytes) bytes")
                }
                phase = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                guard start < buffer.count else { return nil }
                let take = min(remaining, buffer.count - start)
                let bytes = Array(buffer[start..<(start + take)])
                consume(take)
                phase = remaining == take ? .chunkDataEnd : .chunkData(remaining: remaining - take)
                try count(take)
                return .body(bytes)
            case .chunkDataEnd:
                guard buffer.count - start >= 2 else { return nil }
                guard buffer[start] == 13, buffer[start + 1] == 10 else {
                    throw Failure(message: "a chunk does not end with CRLF (at byte \(offset))")
                }
                consume(2)
                phase = .chunkSize
            case .trailers:
                guard let end = find([13, 10]) else {
                    if buffer.count - start > Self.maxHeadBytes { throw Failure(message: "the trailers are too long") }
                    return nil
                }
                let empty = end == start
                consume(end + 2 - start)
                if empty {
                    phase = .done
                    return .end
                }
            case .untilClose:
                guard start < buffer.count else { return nil }
                let bytes = Array(buffer[start...])
                let taken = bytes.count
                consume(taken)
                try count(taken)
                return .body(bytes)
            }
        }
    }

    private mutating func count(_ bytes: Int) throws(Failure) {
        bodyBytes += bytes
        if bodyBytes > maxBodyBytes {
            throw Failure(message: "the response body exceeds the limit of \(maxBodyBytes) bytes")
        }
    }

    private mutating func consume(_ count: Int) {
        start += count
        offset += count
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count - start >= pattern.count else { return nil }
        var index = start
        let last = buffer.count - pattern.count
        while index <= last {
            if buffer[index] == pattern[0] {
                var matches = true
                for k in 1..<pattern.count where buffer[index + k] != pattern[k] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }

    private func parseHead(_ bytes: [UInt8]) throws(Failure) -> Head {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        guard !lines.isEmpty else { throw Failure(message: "empty response head") }
        let statusLine = lines.removeFirst()
        let fields = statusLine.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/1."), fields[1].count == 3, let status = Int(fields[1]),
              (100...599).contains(status)
        else { throw Failure(message: "invalid status line \"\(statusLine.prefix(80))\"") }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw Failure(message: "invalid header line \"\(line.prefix(80))\"")
            }
            headers.append((line[..<colon].lowercased(), String(line[line.index(after: colon)...]).trimmingSpaces))
        }
        return Head(status: status, headers: headers.map { (name: $0.0, value: $0.1) })
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}

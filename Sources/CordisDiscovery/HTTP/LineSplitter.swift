/// Splits a byte stream into newline-terminated lines (the framing of etcd's streamed JSON answers),
/// refusing a line longer than `maxLineBytes` so a server cannot make the client buffer without bound.
package struct LineSplitter: Sendable {
    /// A line longer than the limit.
    package struct Overflow: Error, Equatable, Sendable, CustomStringConvertible {
        /// The limit that was passed.
        package var limit: Int
        package var description: String { "a streamed line is longer than \(limit) bytes" }
    }

    /// The longest line accepted, without its newline.
    package let maxLineBytes: Int
    private var pending: [UInt8] = []

    /// A splitter for lines of at most `maxLineBytes`.
    package init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Adds bytes; returns the lines they complete (without newline; blank lines are skipped).
    package mutating func feed(_ bytes: [UInt8]) throws(Overflow) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var from = bytes.startIndex
        while let newline = bytes[from...].firstIndex(of: 10) {
            pending.append(contentsOf: bytes[from..<newline])
            if pending.count > maxLineBytes { throw Overflow(limit: maxLineBytes) }
            if pending.last == 13 { pending.removeLast() }
            if !pending.isEmpty { lines.append(pending) }
            pending.removeAll(keepingCapacity: true)
            from = newline + 1
        }
        pending.append(contentsOf: bytes[from...])
        if pending.count > maxLineBytes { throw Overflow(limit: maxLineBytes) }
        return lines
    }

    /// The bytes after the last newline (a final line without one).
    package var remainder: [UInt8] { pending }
}

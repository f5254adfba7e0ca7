#if canImport(Glibc)
import Glibc
#endif

/// What the test relays (`LoopbackRelay` on Unix sockets, `TCPRelay` on TCP) do with the bytes they
/// forward, whatever they listen on and whatever faults they play.
enum RelayBytes {
    /// Reads one chunk from `source` into `buffer` and writes all of it to `target`; the number of bytes
    /// forwarded, or nil once either end closed or failed. `onRead` sees the chunk as read, before it is
    /// written (so it sees it even when the write fails).
    static func forwardChunk(
        from source: Int32, to target: Int32, buffer: inout [UInt8], onRead: (ArraySlice<UInt8>) -> Void = { _ in }
    ) -> Int? {
        let count = read(source, &buffer, buffer.count)
        guard count > 0 else { return nil }
        onRead(buffer[0..<count])
        var offset = 0
        while offset < count {
            let written = buffer.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return send(target, base + offset, count - offset, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { return nil }
            offset += written
        }
        return count
    }

    /// Whether `needle` occurs in `haystack` (false for an empty needle).
    static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        var index = haystack.startIndex
        while index + needle.count <= haystack.endIndex {
            if haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}

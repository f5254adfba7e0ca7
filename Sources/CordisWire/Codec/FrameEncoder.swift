/// Writes frames (a 4-byte big-endian length, then the payload) into a caller-owned buffer.
///
/// The buffer is appended to, never cleared, so a link can batch several frames before one write.
/// A payload over `maxFrameSize` is refused with `.oversize` and leaves the buffer as it was.
package struct FrameEncoder: Sendable {
    /// The largest payload written.
    package var maxFrameSize: Int

    /// An encoder refusing payloads larger than `maxFrameSize` bytes (4 MiB by default).
    package init(maxFrameSize: Int = Frame.defaultMaxSize) {
        self.maxFrameSize = maxFrameSize
    }

    /// Appends one frame holding `payload` to `buffer`.
    package func append(payload: some Collection<UInt8>, to buffer: inout [UInt8]) throws(WireError) {
        let length = payload.count
        try check(length)
        Self.appendLength(length, to: &buffer)
        buffer.append(contentsOf: payload)
    }

    /// Appends one frame whose payload `write` appends to the buffer in place (no intermediate copy).
    ///
    /// The length prefix is patched once `write` returns; if the payload is empty, too large, or `write`
    /// throws, the buffer is restored to its previous length and the error is rethrown.
    package func append(
        to buffer: inout [UInt8], writingPayload write: (inout [UInt8]) throws(WireError) -> Void
    ) throws(WireError) {
        let start = buffer.count
        buffer.append(contentsOf: [0, 0, 0, 0] as [UInt8])
        do {
            try write(&buffer)
        } catch {
            buffer.removeSubrange(start...)
            throw error
        }
        let length = buffer.count - start - Frame.headerSize
        do {
            try check(length)
        } catch {
            buffer.removeSubrange(start...)
            throw error
        }
        buffer[start] = UInt8(truncatingIfNeeded: length >> 24)
        buffer[start + 1] = UInt8(truncatingIfNeeded: length >> 16)
        buffer[start + 2] = UInt8(truncatingIfNeeded: length >> 8)
        buffer[start + 3] = UInt8(truncatingIfNeeded: length)
    }

    private func check(_ length: Int) throws(WireError) {
        if length > maxFrameSize {
            throw WireError(.oversize, "frame of \(length) bytes exceeds the limit of \(maxFrameSize) bytes")
        }
        if length == 0 { throw WireError(.badLength, "a frame cannot be empty") }
    }

    /// Appends the 4-byte big-endian length prefix.
    static func appendLength(_ length: Int, to buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: length >> 24))
        buffer.append(UInt8(truncatingIfNeeded: length >> 16))
        buffer.append(UInt8(truncatingIfNeeded: length >> 8))
        buffer.append(UInt8(truncatingIfNeeded: length))
    }
}

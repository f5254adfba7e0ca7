/// Splits a byte stream into frames: a pure step function that never blocks and never does I/O.
///
/// Feed bytes as they arrive with `feed(_:)`, then call `next()` until it returns nil ("need more").
/// A length over `maxFrameSize` is refused as soon as its 4 bytes are seen, before anything is
/// allocated for the payload. At the end of the stream call `finish()`, which reports a frame cut short.
/// After an error the decoder is spent: every later `next()` throws the same error.
/// Bytes fed are buffered until taken, so callers should drain `next()` after each `feed`.
package struct FrameDecoder: Sendable {
    /// The largest payload accepted; may be changed between frames (a link raises it after the handshake).
    package var maxFrameSize: Int

    private var storage: [UInt8] = []
    private var readIndex = 0
    /// The stream offset of `storage[0]`.
    private var baseOffset = 0
    private var failure: WireError?

    /// A decoder refusing payloads larger than `maxFrameSize` bytes (4 MiB by default).
    package init(maxFrameSize: Int = Frame.defaultMaxSize) {
        self.maxFrameSize = maxFrameSize
    }

    /// The number of bytes fed but not yet returned in a frame.
    package var bufferedByteCount: Int { storage.count - readIndex }

    /// The stream offset of the next byte to decode (the total bytes consumed so far).
    package var streamOffset: Int { baseOffset + readIndex }

    /// Appends bytes received from the stream.
    package mutating func feed(_ bytes: some Collection<UInt8>) {
        compactIfWorthwhile()
        storage.append(contentsOf: bytes)
    }

    /// Appends bytes received from the stream, from raw memory (for example a read buffer).
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthwhile()
        storage.append(contentsOf: bytes)
    }

    /// The next complete frame, or nil when more bytes are needed.
    ///
    /// Throws `.oversize` (length over `maxFrameSize`) or `.badLength` (length zero), with the offset
    /// of the length prefix; the error repeats on every later call.
    package mutating func next() throws(WireError) -> Frame? {
        if let failure { throw failure }
        let available = storage.count - readIndex
        guard available >= Frame.headerSize else { return nil }
        let length = storage.withUnsafeBufferPointer { buffer in
            Int(buffer[readIndex]) << 24 | Int(buffer[readIndex + 1]) << 16
                | Int(buffer[readIndex + 2]) << 8 | Int(buffer[readIndex + 3])
        }
        let frameOffset = baseOffset + readIndex
        if length > maxFrameSize {
            try fail(WireError(
                .oversize, "frame of \(length) bytes exceeds the limit of \(maxFrameSize) bytes",
                offset: frameOffset))
        }
        if length == 0 {
            try fail(WireError(.badLength, "frame of length 0 (a frame holds one JSON object)", offset: frameOffset))
        }
        guard available - Frame.headerSize >= length else { return nil }
        let start = readIndex + Frame.headerSize
        let payload = Array(storage[start ..< start + length])
        readIndex = start + length
        if readIndex == storage.count {
            baseOffset += storage.count
            storage.removeAll(keepingCapacity: true)
            readIndex = 0
        }
        return Frame(payload: payload, offset: frameOffset)
    }

    /// Declares the end of the stream: throws `.truncated` when a frame was begun but not completed.
    package mutating func finish() throws(WireError) {
        if let failure { throw failure }
        let available = storage.count - readIndex
        guard available > 0 else { return }
        let what = available < Frame.headerSize
            ? "\(available) of the 4 length bytes"
            : "\(available - Frame.headerSize) payload bytes of a frame"
        try fail(WireError(.truncated, "stream ended after \(what)", offset: baseOffset + readIndex))
    }

    private mutating func fail(_ error: WireError) throws(WireError) -> Never {
        failure = error
        throw error
    }

    private mutating func compactIfWorthwhile() {
        guard readIndex > 0, readIndex >= 4096, readIndex * 2 >= storage.count else { return }
        storage.removeSubrange(0 ..< readIndex)
        baseOffset += readIndex
        readIndex = 0
    }
}

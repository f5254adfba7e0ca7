/// One frame taken off the wire: the payload that followed a 4-byte big-endian length prefix.
///
/// `offset` is where the frame's length prefix starts in the byte stream, so errors found while decoding
/// the payload can name a stream position (`offset + 4 + i` for payload byte `i`).
public struct Frame: Sendable, Hashable {
    /// The payload bytes (UTF-8 JSON for every Cordis message).
    package var payload: [UInt8]
    /// The stream offset of the frame's length prefix.
    package var offset: Int

    /// A frame with the given payload, found at `offset` in its stream.
    package init(payload: [UInt8], offset: Int = 0) {
        self.payload = payload
        self.offset = offset
    }

    /// The size of the length prefix in front of every payload.
    package static let headerSize = 4

    /// The default largest payload accepted or written: 4 MiB.
    public static let defaultMaxSize = 4 * 1024 * 1024

    /// The stream offset of payload byte `index`.
    package func streamOffset(ofPayloadByte index: Int) -> Int { offset + Frame.headerSize + index }
}

import CordisJSON

/// Adds the sequence number and MAC to every frame sent on an authenticated link.
///
/// The payload becomes `{"seq":N,"mac":"<64 hex>",` followed by the message object without its opening
/// brace; the MAC is HMAC-SHA256 under the sending key of that whole payload with the 64 MAC digits
/// written as `0`. Sequence numbers start at 0 and grow by one per frame.
struct FrameSealer: Sendable {
    private let key: HMACSHA256.Key
    /// The sequence number of the next frame.
    private(set) var sequence: Int = 0

    init(key: [UInt8]) {
        self.key = HMACSHA256.Key(key)
    }

    /// What a sealed payload starts with, before its sequence number.
    static var seqPrefix: StaticString { #"{"seq":"# }
    /// What follows the sequence number, before the MAC digits.
    static var macPrefix: StaticString { #","mac":""# }
    /// The MAC's digits as they are hashed (all `0`) and the quote that closes them.
    static var macPlaceholder: StaticString { #"0000000000000000000000000000000000000000000000000000000000000000""# }
    /// How many hexadecimal digits the MAC is written as.
    static var macDigits: Int { 2 * HMACSHA256.size }

    /// Takes back the frames sealed since sequence number `mark` (they were not sent).
    mutating func rewind(to mark: Int) {
        sequence = min(sequence, mark)
    }

    mutating func append(_ message: WireMessage, to buffer: inout [UInt8], encoder: FrameEncoder) throws(WireError) {
        try append(to: &buffer, encoder: encoder) { message.encode(into: &$0) }
    }

    /// Appends one sealed frame whose message object `body` writes (a whole JSON object, `{` first).
    mutating func append(
        to buffer: inout [UInt8], encoder: FrameEncoder, body: (inout [UInt8]) -> Void
    ) throws(WireError) {
        let sequence = self.sequence
        let key = self.key
        try encoder.append(to: &buffer) { payload throws(WireError) in
            let start = payload.count
            Self.append(Self.seqPrefix, to: &payload)
            JSONSerializer.appendInteger(Int64(sequence), to: &payload)
            Self.append(Self.macPrefix, to: &payload)
            let macStart = payload.count
            Self.append(Self.macPlaceholder, to: &payload)
            let bodyStart = payload.count
            body(&payload)
            payload[bodyStart] = UInt8(ascii: ",")
            try Self.writeMAC(key: key, over: start ..< payload.count, macStart: macStart, in: &payload)
        }
        self.sequence += 1
    }

    /// Appends the bytes of `text` (one copy, no per-byte loop).
    static func append(_ text: StaticString, to payload: inout [UInt8]) {
        payload.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Computes the MAC of `payload[range]` (its MAC digits still zeros) and writes its hex over them.
    private static func writeMAC(
        key: HMACSHA256.Key, over range: Range<Int>, macStart: Int, in payload: inout [UInt8]
    ) throws(WireError) {
        let result: Result<Void, WireError> = payload.withUnsafeMutableBytes { bytes in
            withUnsafeTemporaryAllocation(byteCount: HMACSHA256.size, alignment: 1) { mac in
                do throws(WireError) {
                    try key.mac(UnsafeRawBufferPointer(rebasing: bytes[range]), into: mac)
                } catch {
                    return .failure(error)
                }
                Hex.write(UnsafeRawBufferPointer(mac), to: UnsafeMutableRawBufferPointer(rebasing: bytes[macStart...]))
                return .success(())
            }
        }
        try result.get()
    }
}

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

    static let seqPrefix: [UInt8] = Array(#"{"seq":"#.utf8)
    static let macPrefix: [UInt8] = Array(#","mac":""#.utf8)
    static let macDigits = HMACSHA256.size * 2

    mutating func append(_ message: WireMessage, to buffer: inout [UInt8], encoder: FrameEncoder) throws(WireError) {
        let sequence = self.sequence
        let key = self.key
        try encoder.append(to: &buffer) { payload throws(WireError) in
            let start = payload.count
            payload.append(contentsOf: Self.seqPrefix)
            JSONSerializer.appendInteger(Int64(sequence), to: &payload)
            payload.append(contentsOf: Self.macPrefix)
            let macStart = payload.count
            payload.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: Self.macDigits))
            payload.append(UInt8(ascii: "\""))
            let bodyStart = payload.count
            message.encode(into: &payload)
            payload[bodyStart] = UInt8(ascii: ",")
            try Self.writeMAC(key: key, over: start ..< payload.count, macStart: macStart, in: &payload)
        }
        self.sequence += 1
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

import COpenSSL

/// Verifies the sequence number and MAC of every frame received on an authenticated link, then
/// decodes its message (see `FrameSealer` for the layout).
///
/// A frame whose MAC does not verify is `.badMAC`; one that verifies but is not the next in sequence
/// (replayed, reordered, or after a dropped frame) is `.replay`. Either closes the link.
struct FrameOpener: Sendable {
    private let key: FrameMACKey
    /// The sequence number expected next.
    private(set) var sequence: Int = 0

    init(key: [UInt8]) {
        self.key = FrameMACKey(key)
    }

    mutating func open(_ frame: Frame) throws(WireError) -> WireMessage {
        var payload = frame.payload
        let (claimedSequence, macStart, bodyStart) = try parsePrefix(payload, frameOffset: frame.offset)
        let digits = macStart ..< macStart + FrameSealer.macDigits
        guard payload[digits].allSatisfy({ Hex.value($0) != nil }) else {
            throw WireError(.badMAC, "frame MAC is not 64 lowercase hexadecimal digits", offset: frame.offset)
        }
        guard try Self.verify(payload: &payload, digits: digits, key: key) else {
            throw WireError(.badMAC, "frame MAC does not verify: the frame was altered or forged", offset: frame.offset)
        }
        guard claimedSequence == sequence else {
            throw WireError(
                .replay, "frame has sequence number \(claimedSequence) where \(sequence) was expected",
                offset: frame.offset)
        }
        sequence += 1
        payload[bodyStart] = UInt8(ascii: "{")
        let result: Result<WireMessage, WireError> = payload.withUnsafeBytes { bytes in
            do throws(WireError) {
                return .success(try WireMessage(
                    payload: UnsafeRawBufferPointer(rebasing: bytes[bodyStart...]), frameOffset: frame.offset + bodyStart))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Copies the claimed MAC digits aside, writes zeros over them, computes the MAC and compares its
    /// hex with the claim in constant time (both lowercase), without allocating.
    private static func verify(payload: inout [UInt8], digits: Range<Int>, key: FrameMACKey) throws(WireError) -> Bool {
        let count = FrameSealer.macDigits
        let outcome: Result<Bool, WireError> = payload.withUnsafeMutableBytes { bytes in
            withUnsafeTemporaryAllocation(byteCount: 2 * count + HMACSHA256.size, alignment: 1) { scratch in
                let claimed = UnsafeMutableRawBufferPointer(rebasing: scratch[0 ..< count])
                let expected = UnsafeMutableRawBufferPointer(rebasing: scratch[count ..< 2 * count])
                let mac = UnsafeMutableRawBufferPointer(rebasing: scratch[2 * count ..< 2 * count + HMACSHA256.size])
                claimed.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[digits]))
                UnsafeMutableRawBufferPointer(rebasing: bytes[digits]).initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "0"))
                do throws(WireError) {
                    try key.mac(UnsafeRawBufferPointer(bytes), into: mac)
                } catch {
                    return .failure(error)
                }
                Hex.write(UnsafeRawBufferPointer(mac), to: expected)
                return .success(CRYPTO_memcmp(claimed.baseAddress, expected.baseAddress, count) == 0)
            }
        }
        return try outcome.get()
    }

    /// Reads `{"seq":N,"mac":"` + 64 digits + `"` and checks a `,` follows; returns N, where the MAC
    /// digits start, and where the message's members start (the `,`).
    private func parsePrefix(_ payload: [UInt8], frameOffset: Int) throws(WireError) -> (Int, Int, Int) {
        let missing = WireError(.badMAC, "frame does not start with its \"seq\" and \"mac\" members", offset: frameOffset)
        let seqPrefix = FrameSealer.seqPrefix
        guard payload.count > seqPrefix.count, payload[0 ..< seqPrefix.count].elementsEqual(seqPrefix) else { throw missing }
        var index = seqPrefix.count
        var value = 0
        let digitsStart = index
        while index < payload.count, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(payload[index]) {
            guard index - digitsStart < 18 else { throw missing }
            value = value * 10 + Int(payload[index] - UInt8(ascii: "0"))
            index += 1
        }
        let digitCount = index - digitsStart
        guard digitCount > 0, digitCount == 1 || payload[digitsStart] != UInt8(ascii: "0") else { throw missing }
        let macPrefix = FrameSealer.macPrefix
        guard payload.count >= index + macPrefix.count + FrameSealer.macDigits + 2,
              payload[index ..< index + macPrefix.count].elementsEqual(macPrefix)
        else { throw missing }
        let macStart = index + macPrefix.count
        let quote = macStart + FrameSealer.macDigits
        guard payload[quote] == UInt8(ascii: "\""), payload[quote + 1] == UInt8(ascii: ",") else { throw missing }
        return (value, macStart, quote + 1)
    }
}

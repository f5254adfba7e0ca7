import COpenSSL

/// Verifies the sequence number and MAC of every frame received on an authenticated link, then
/// decodes its message (see `FrameSealer` for the layout).
///
/// A frame whose MAC does not verify is `.badMAC`; one that verifies but is not the next in sequence
/// (replayed, reordered, or after a dropped frame) is `.replay`. Either closes the link.
struct FrameOpener: Sendable {
    private let key: HMACSHA256.Key
    /// The sequence number expected next.
    private(set) var sequence: Int = 0

    init(key: [UInt8]) {
        self.key = HMACSHA256.Key(key)
    }

    mutating func open(_ frame: Frame) throws(WireError) -> WireMessage {
        let (claimedSequence, macStart, bodyStart) = try parsePrefix(frame.payload, frameOffset: frame.offset)
        let digits = macStart ..< macStart + FrameSealer.macDigits
        guard frame.payload[digits].allSatisfy({ Hex.value($0) != nil }) else {
            throw WireError(.badMAC, "frame MAC is not 64 lowercase hexadecimal digits", offset: frame.offset)
        }
        guard try Self.verify(payload: frame.payload, digits: digits, key: key) else {
            throw WireError(.badMAC, "frame MAC does not verify: the frame was altered or forged", offset: frame.offset)
        }
        guard claimedSequence == sequence else {
            throw WireError(
                .replay, "frame has sequence number \(claimedSequence) where \(sequence) was expected",
                offset: frame.offset)
        }
        sequence += 1
        var payload = frame.payload
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

    /// Computes the MAC of the payload with its MAC digits read as zeros (the bytes before them, 64
    /// zeros, the bytes after), writes its hex aside and compares it with the claimed digits in constant
    /// time (both lowercase), without copying the payload or allocating.
    private static func verify(payload: [UInt8], digits: Range<Int>, key: HMACSHA256.Key) throws(WireError) -> Bool {
        let count = FrameSealer.macDigits
        let outcome: Result<Bool, WireError> = payload.withUnsafeBytes { bytes in
            withUnsafeTemporaryAllocation(byteCount: 2 * count + HMACSHA256.size, alignment: 1) { scratch in
                let zeros = UnsafeMutableRawBufferPointer(rebasing: scratch[0 ..< count])
                let expected = UnsafeMutableRawBufferPointer(rebasing: scratch[count ..< 2 * count])
                let mac = UnsafeMutableRawBufferPointer(rebasing: scratch[2 * count ..< 2 * count + HMACSHA256.size])
                zeros.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "0"))
                do throws(WireError) {
                    try key.mac(into: mac) { input in
                        input.add(UnsafeRawBufferPointer(rebasing: bytes[..<digits.lowerBound]))
                        input.add(UnsafeRawBufferPointer(zeros))
                        input.add(UnsafeRawBufferPointer(rebasing: bytes[digits.upperBound...]))
                    }
                } catch {
                    return .failure(error)
                }
                Hex.write(UnsafeRawBufferPointer(mac), to: expected)
                let claimed = UnsafeRawBufferPointer(rebasing: bytes[digits])
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

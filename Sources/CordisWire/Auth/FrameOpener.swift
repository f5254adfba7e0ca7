import CordisJSON

/// Verifies the sequence number and MAC of every frame received on an authenticated link, then
/// decodes its message (see `FrameSealer` for the layout).
///
/// A frame whose MAC does not verify is `.badMAC`; one that verifies but is not the next in sequence
/// (replayed, reordered, or after a dropped frame) is `.replay`. Either closes the link.
///
/// The frame is read in place: the MAC is computed over its bytes in three pieces (before the digits,
/// 64 zeros, after them) and a `call` or `result` is decoded from the `,` that follows the MAC, so the
/// payload is not copied (only a message the direct decoder leaves to the general one is).
struct FrameOpener: Sendable {
    private let key: HMACSHA256.Key
    /// The sequence number expected next.
    private(set) var sequence: Int = 0

    init(key: [UInt8]) {
        self.key = HMACSHA256.Key(key)
    }

    mutating func open(_ frame: Frame) throws(WireError) -> WireMessage {
        let expected = sequence
        let key = self.key
        let result: Result<WireMessage, WireError> = frame.payload.withUnsafeBytes { bytes in
            do throws(WireError) {
                return .success(try Self.open(bytes, expecting: expected, key: key, frameOffset: frame.offset))
            } catch {
                return .failure(error)
            }
        }
        let message = try result.get()
        sequence += 1
        return message
    }

    private static func open(
        _ payload: UnsafeRawBufferPointer, expecting sequence: Int, key: HMACSHA256.Key, frameOffset: Int
    ) throws(WireError) -> WireMessage {
        let (claimedSequence, macStart, bodyStart) = try parsePrefix(payload, frameOffset: frameOffset)
        let digits = macStart ..< macStart + FrameSealer.macDigits
        guard try verify(payload, digits: digits, key: key) else {
            guard payload[digits].allSatisfy({ Hex.value($0) != nil }) else {
                throw WireError(.badMAC, "frame MAC is not 64 lowercase hexadecimal digits", offset: frameOffset)
            }
            throw WireError(.badMAC, "frame MAC does not verify: the frame was altered or forged", offset: frameOffset)
        }
        guard claimedSequence == sequence else {
            throw WireError(
                .replay, "frame has sequence number \(claimedSequence) where \(sequence) was expected",
                offset: frameOffset)
        }
        let body = UnsafeRawBufferPointer(rebasing: payload[bodyStart...])
        if let message = HotMessageDecoder.decode(body, opening: UInt8(ascii: ","), maxDepth: JSONParser.defaultMaxDepth) {
            return message
        }
        // Any other message, or an error to name: the general decoder, on a copy that opens with `{`.
        var object = Array(body)
        object[0] = UInt8(ascii: "{")
        let result: Result<WireMessage, WireError> = object.withUnsafeBytes { bytes in
            do throws(WireError) {
                return .success(try WireMessage(parsing: bytes, frameOffset: frameOffset + bodyStart))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Computes the MAC of the payload with its MAC digits read as zeros, writes its hex aside and
    /// compares it with the claimed digits in constant time (a difference anywhere costs the same).
    private static func verify(_ payload: UnsafeRawBufferPointer, digits: Range<Int>, key: HMACSHA256.Key) throws(WireError) -> Bool {
        let count = FrameSealer.macDigits
        let outcome: Result<Bool, WireError> = withUnsafeTemporaryAllocation(
            byteCount: count + HMACSHA256.size, alignment: 8
        ) { scratch in
            let expected = UnsafeMutableRawBufferPointer(rebasing: scratch[0 ..< count])
            let mac = UnsafeMutableRawBufferPointer(rebasing: scratch[count ..< count + HMACSHA256.size])
            let zeros = FrameSealer.macPlaceholder
            do throws(WireError) {
                try key.mac(into: mac) { input in
                    input.add(UnsafeRawBufferPointer(rebasing: payload[..<digits.lowerBound]))
                    input.add(UnsafeRawBufferPointer(start: zeros.utf8Start, count: count))
                    input.add(UnsafeRawBufferPointer(rebasing: payload[digits.upperBound...]))
                }
            } catch {
                return .failure(error)
            }
            Hex.write(UnsafeRawBufferPointer(mac), to: expected)
            var difference: UInt64 = 0
            for offset in stride(from: 0, to: count, by: 8) {
                difference |= payload.loadUnaligned(fromByteOffset: digits.lowerBound + offset, as: UInt64.self)
                    ^ expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            }
            return .success(difference == 0)
        }
        return try outcome.get()
    }

    /// Reads `{"seq":N,"mac":"` + 64 digits + `"` and checks a `,` follows; returns N, where the MAC
    /// digits start, and where the message's members start (the `,`).
    private static func parsePrefix(_ payload: UnsafeRawBufferPointer, frameOffset: Int) throws(WireError) -> (Int, Int, Int) {
        let missing = WireError(.badMAC, "frame does not start with its \"seq\" and \"mac\" members", offset: frameOffset)
        var index = 0
        guard matches(FrameSealer.seqPrefix, in: payload, at: &index) else { throw missing }
        var value = 0
        let digitsStart = index
        while index < payload.count, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(payload[index]) {
            guard index - digitsStart < 18 else { throw missing }
            value = value * 10 + Int(payload[index] - UInt8(ascii: "0"))
            index += 1
        }
        let digitCount = index - digitsStart
        guard digitCount > 0, digitCount == 1 || payload[digitsStart] != UInt8(ascii: "0") else { throw missing }
        guard matches(FrameSealer.macPrefix, in: payload, at: &index),
              payload.count >= index + FrameSealer.macDigits + 2
        else { throw missing }
        let macStart = index
        let quote = macStart + FrameSealer.macDigits
        guard payload[quote] == UInt8(ascii: "\""), payload[quote + 1] == UInt8(ascii: ",") else { throw missing }
        return (value, macStart, quote + 1)
    }

    /// True, and `index` moved past them, when the bytes at `index` are `text`.
    private static func matches(_ text: StaticString, in payload: UnsafeRawBufferPointer, at index: inout Int) -> Bool {
        guard payload.hasASCII(text, at: index) else { return false }
        index += text.utf8CodeUnitCount
        return true
    }
}

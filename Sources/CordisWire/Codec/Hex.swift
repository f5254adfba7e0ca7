/// Lowercase hexadecimal for nonces, proofs and MACs.
enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    static func append(_ bytes: [UInt8], to buffer: inout [UInt8]) {
        for byte in bytes {
            buffer.append(digits[Int(byte >> 4)])
            buffer.append(digits[Int(byte & 0x0F)])
        }
    }

    /// Writes the hex of `bytes` to the start of `out`, which must hold twice as many bytes.
    static func write(_ bytes: UnsafeRawBufferPointer, to out: UnsafeMutableRawBufferPointer) {
        var index = 0
        for byte in bytes where index + 1 < out.count {
            out[index] = digits[Int(byte >> 4)]
            out[index + 1] = digits[Int(byte & 0x0F)]
            index += 2
        }
    }

    static func string(_ bytes: [UInt8]) -> String {
        var buffer: [UInt8] = []
        append(bytes, to: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The value of one lowercase hex digit, or nil.
    static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// Decodes lowercase hex of exactly `count` bytes, or nil.
    static func decode(_ text: some Collection<UInt8>, count: Int) -> [UInt8]? {
        guard text.count == count * 2 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(count)
        var iterator = text.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = value(high), let l = value(low) else { return nil }
            result.append(h << 4 | l)
        }
        return result
    }
}

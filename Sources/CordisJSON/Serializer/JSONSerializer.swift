/// Writes JSON text into a caller-owned byte buffer (appending), compact or pretty.
///
/// Objects are written in their key order. Strings escape `"`, `\` and control characters (`\n`,
/// `\t`… or `\u00XX`); everything else, `/` and non-ASCII included, is written as UTF-8. Integers are
/// written as integers, doubles in their shortest round-tripping form with a fraction or exponent
/// (`1.0`, `0.1`, `1e+20`); a non-finite double, which JSON cannot express, is written as `null`.
public enum JSONSerializer {
    /// Appends `value` to `buffer`.
    public static func append(_ value: JSONValue, to buffer: inout [UInt8], format: JSONFormat = .compact) {
        switch format {
        case .compact:
            appendCompact(value, to: &buffer)
        case .pretty:
            appendPretty(value, to: &buffer, indent: 0)
            buffer.append(0x0A)
        }
    }

    /// Appends `string` as a quoted, escaped JSON string.
    public static func appendString(_ string: String, to buffer: inout [UInt8]) {
        // A native or small string lends its UTF-8 as it is; `withUTF8` would need a mutable copy of
        // the string, a retain and a release of its storage for every key and value written.
        if string.utf8.withContiguousStorageIfAvailable({ appendQuoted($0, to: &buffer) }) != nil { return }
        var copy = string
        copy.withUTF8 { appendQuoted($0, to: &buffer) }
    }

    /// Appends UTF-8 `bytes` quoted, with the characters JSON requires escaped.
    private static func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < index {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            }
            runStart = index + 1
            buffer.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
            case 0x0A: buffer.append(UInt8(ascii: "n"))
            case 0x0D: buffer.append(UInt8(ascii: "r"))
            case 0x09: buffer.append(UInt8(ascii: "t"))
            case 0x08: buffer.append(UInt8(ascii: "b"))
            case 0x0C: buffer.append(UInt8(ascii: "f"))
            default:
                buffer.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                buffer.append(hexDigit(byte >> 4))
                buffer.append(hexDigit(byte & 0x0F))
            }
        }
        if runStart < bytes.count {
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// Appends an integer in decimal.
    public static func appendInteger(_ value: Int64, to buffer: inout [UInt8]) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        if magnitude < 10 {
            buffer.append(UInt8(ascii: "0") &+ UInt8(magnitude))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = 20
            while magnitude > 0 {
                index -= 1
                digits[index] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index..<20]))
        }
    }

    /// Appends a number: an integral one within ±(2^53 − 1) as digits (`4`, not `4.0`), any other in its
    /// shortest round-tripping form (`0.5`, `1e+300`); a non-finite one, which JSON cannot express, as
    /// `null`.
    public static func appendNumber(_ value: Double, to buffer: inout [UInt8]) {
        if let exact = JSONValue.safeInteger(value) {
            appendInteger(exact, to: &buffer)
            return
        }
        guard value.isFinite else {
            buffer.append(contentsOf: "null".utf8)
            return
        }
        // Swift's description is the shortest text that reads back as the same Double, with a
        // fraction or an exponent (`0.5`, `1e-05`, `9.007199254740992e+15`), all valid JSON numbers.
        buffer.append(contentsOf: value.description.utf8)
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ nibble &- 10
    }

    private static func appendCompact(_ value: JSONValue, to buffer: inout [UInt8]) {
        switch value {
        case .null: buffer.append(contentsOf: "null".utf8)
        case .bool(let flag): buffer.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .number(let number): appendNumber(number, to: &buffer)
        case .string(let string): appendString(string, to: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                appendCompact(element, to: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let object):
            buffer.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                appendString(member.key, to: &buffer)
                buffer.append(UInt8(ascii: ":"))
                appendCompact(member.value, to: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }

    private static func appendIndent(_ level: Int, to buffer: inout [UInt8]) {
        buffer.append(0x0A)
        for _ in 0..<(level * 2) { buffer.append(0x20) }
    }

    private static func appendPretty(_ value: JSONValue, to buffer: inout [UInt8], indent: Int) {
        switch value {
        case .array(let elements) where !elements.isEmpty:
            buffer.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                appendIndent(indent + 1, to: &buffer)
                appendPretty(element, to: &buffer, indent: indent + 1)
            }
            appendIndent(indent, to: &buffer)
            buffer.append(UInt8(ascii: "]"))
        case .object(let object) where !object.isEmpty:
            buffer.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                appendIndent(indent + 1, to: &buffer)
                appendString(member.key, to: &buffer)
                buffer.append(contentsOf: [UInt8(ascii: ":"), 0x20])
                appendPretty(member.value, to: &buffer, indent: indent + 1)
            }
            appendIndent(indent, to: &buffer)
            buffer.append(UInt8(ascii: "}"))
        default:
            appendCompact(value, to: &buffer)
        }
    }
}

extension JSONValue {
    /// The value as JSON bytes in the given format.
    public func serialized(_ format: JSONFormat = .compact) -> [UInt8] {
        var bytes: [UInt8] = []
        JSONSerializer.append(self, to: &bytes, format: format)
        return bytes
    }

    /// The value as JSON text in the given format.
    public func jsonString(_ format: JSONFormat = .compact) -> String {
        String(decoding: serialized(format), as: UTF8.self)
    }
}

/// A strict RFC 8259 JSON parser: one pass over the bytes, no recursion, a nesting limit.
///
/// Rejects trailing commas, comments, a byte-order mark, invalid UTF-8, unpaired surrogate escapes,
/// leading zeros, raw control characters in strings, duplicate object keys, and anything after the
/// value but whitespace. Every method throws `JSONParseError`; none can crash on any input.
public struct JSONParser: Sendable {
    /// The default limit on nested arrays and objects.
    public static let defaultMaxDepth = 512

    /// How many arrays and objects may be nested; one more is `depthLimitExceeded`.
    public var maxDepth: Int

    /// A parser with the given nesting limit.
    public init(maxDepth: Int = JSONParser.defaultMaxDepth) {
        self.maxDepth = maxDepth
    }

    /// Parses one JSON value from raw bytes (the fast path). Throws `JSONParseError`.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws -> JSONValue {
        var builder = JSONTreeBuilder()
        _ = try JSONScanner.scan(bytes, maxDepth: maxDepth, into: &builder)
        return builder.result
    }

    /// Parses the one JSON value that starts at `offset` in `bytes` (whitespace before it is skipped)
    /// and returns it with the offset just past it; nothing after it is looked at. For a reader that
    /// takes a document's outer object apart itself (a wire message's members) and hands the values
    /// inside to the parser. Error offsets count from the start of `bytes`. Throws `JSONParseError`.
    package func parseValue(in bytes: UnsafeRawBufferPointer, at offset: Int) throws -> (value: JSONValue, end: Int) {
        var builder = JSONTreeBuilder()
        let end = try JSONScanner.scan(bytes, from: offset, maxDepth: maxDepth, into: &builder)
        return (builder.result, end)
    }

    /// Parses one JSON value from a byte array. Throws `JSONParseError`.
    public func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBytes { try parse($0) }
    }

    /// Parses one JSON value from any byte collection, copying it first when it is not contiguous.
    /// Throws `JSONParseError`.
    public func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        if let result = try bytes.withContiguousStorageIfAvailable({ try parse(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try parse(Array(bytes))
    }

    /// Parses one JSON value from text. Throws `JSONParseError`.
    public func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try parse(UnsafeRawBufferPointer($0)) }
    }
}

extension JSONValue {
    /// Parses JSON bytes with the default limits. Throws `JSONParseError`.
    public init(parsing bytes: some Collection<UInt8>) throws {
        self = try JSONParser().parse(bytes)
    }

    /// Parses JSON text with the default limits. Throws `JSONParseError`.
    public init(parsing text: String) throws {
        self = try JSONParser().parse(text)
    }
}

/// The parser's state over one input buffer.
struct JSONScanner {
    /// An open array or object: where its members start in what the builder keeps (`JSONBuilder.open`),
    /// where its keys start in `keys`, and how many members it has so far.
    struct Frame {
        var isObject: Bool
        var valueStart: Int
        var keyStart: Int
        var seenKeys: Set<String>?
        var count = 0
    }

    let base: UnsafePointer<UInt8>
    let count: Int
    let maxDepth: Int
    var position = 0
    private var frames: [Frame] = []
    /// The keys of the open objects, outermost first (to refuse a repeated key).
    private var keys: [String] = []

    init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.base = base
        self.count = count
        self.maxDepth = maxDepth
    }

    // MARK: Document

    /// Reads `bytes` into `builder`: all of them (whitespace around the one value allowed) when `offset`
    /// is nil, else the one value that starts at `offset` (whitespace before it skipped), nothing after
    /// it looked at. Returns the offset just past what was read. Empty input, or an offset outside the
    /// bytes, is `unexpectedEnd`; error offsets count from the start of `bytes`.
    @inline(__always)
    static func scan<Builder: JSONBuilder>(
        _ bytes: UnsafeRawBufferPointer, from offset: Int? = nil, maxDepth: Int, into builder: inout Builder
    ) throws -> Int {
        let start = offset ?? 0
        guard let base = bytes.baseAddress, start >= 0, start < bytes.count else {
            throw JSONParseError(
                code: .unexpectedEnd, offset: max(0, min(start, bytes.count)), line: 1, column: 1,
                reason: "unexpected end of input")
        }
        var scanner = JSONScanner(base: base.assumingMemoryBound(to: UInt8.self), count: bytes.count, maxDepth: maxDepth)
        scanner.position = start
        try scanner.scan(into: &builder, wholeInput: offset == nil)
        return scanner.position
    }

    /// Reads one value from the position on, checking the grammar, and hands what it reads to
    /// `builder` in document order; with `wholeInput` only whitespace may follow it, else the position
    /// is left just past it. Every builder sees the same input accepted and the same errors thrown.
    private mutating func scan<Builder: JSONBuilder>(into builder: inout Builder, wholeInput: Bool) throws {
        scanning: while true {
            skipWhitespace()
            guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
            let byte = base[position]
            switch byte {
            case UInt8(ascii: "{"):
                // An empty object opens no frame: reading `{}` allocates nothing.
                try checkDepth()
                position += 1
                skipWhitespace()
                if position < count, base[position] == UInt8(ascii: "}") {
                    position += 1
                    builder.value(.object(JSONObject()), nested: !frames.isEmpty)
                } else {
                    push(isObject: true, valueStart: builder.open(isObject: true))
                    try parseKey()
                    builder.key(keys[keys.count - 1])
                    continue scanning
                }
            case UInt8(ascii: "["):
                try checkDepth()
                position += 1
                skipWhitespace()
                if position < count, base[position] == UInt8(ascii: "]") {
                    position += 1
                    builder.value(.array([]), nested: !frames.isEmpty)
                } else {
                    push(isObject: false, valueStart: builder.open(isObject: false))
                    continue scanning
                }
            case UInt8(ascii: "\""):
                builder.value(.string(try parseString()), nested: !frames.isEmpty)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                builder.number(try parseNumber(), nested: !frames.isEmpty)
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                builder.value(.bool(true), nested: !frames.isEmpty)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                builder.value(.bool(false), nested: !frames.isEmpty)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                builder.value(.null, nested: !frames.isEmpty)
            default:
                throw unexpectedHere()
            }

            // Count the finished value in the open containers, closing those that end here.
            while true {
                guard !frames.isEmpty else {
                    guard wholeInput else { return }
                    skipWhitespace()
                    guard position == count else { throw unexpectedHere() }
                    return
                }
                let top = frames.count - 1
                frames[top].count += 1
                skipWhitespace()
                guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
                let next = base[position]
                let frame = frames[top]
                if next == UInt8(ascii: ",") {
                    position += 1
                    if frame.isObject {
                        skipWhitespace()
                        try parseKey()
                        builder.key(keys[keys.count - 1])
                    }
                    continue scanning
                }
                if frame.isObject, next == UInt8(ascii: "}") {
                    position += 1
                    frames.removeLast()
                    builder.close(frame, keys: keys[frame.keyStart...], nested: !frames.isEmpty)
                    keys.removeSubrange(frame.keyStart...)
                    continue
                }
                if !frame.isObject, next == UInt8(ascii: "]") {
                    position += 1
                    frames.removeLast()
                    builder.close(frame, keys: [], nested: !frames.isEmpty)
                    continue
                }
                throw unexpectedHere()
            }
        }
    }

    /// Throws when one more array or object would nest deeper than the limit.
    private func checkDepth() throws {
        guard frames.count < maxDepth else {
            throw error(.depthLimitExceeded, "nesting deeper than \(maxDepth) levels")
        }
    }

    /// Opens a frame for a non-empty array or object (its depth checked by `checkDepth`) whose members
    /// start at `valueStart` in what the builder keeps.
    private mutating func push(isObject: Bool, valueStart: Int) {
        if frames.capacity == 0 {
            // Room for a typical message at once, rather than regrowing each stack from one element.
            frames.reserveCapacity(4)
            keys.reserveCapacity(8)
        }
        frames.append(Frame(isObject: isObject, valueStart: valueStart, keyStart: keys.count, seenKeys: nil))
    }

    /// Reads `"key" :` for the innermost object, rejecting a key it already has.
    private mutating func parseKey() throws {
        guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
        guard base[position] == UInt8(ascii: "\"") else { throw unexpectedHere() }
        let keyOffset = position
        let key = try parseString()
        let top = frames.count - 1
        let frame = frames[top]
        let existing = keys.count - frame.keyStart
        var duplicate = false
        if var seen = frame.seenKeys {
            frames[top].seenKeys = nil
            duplicate = !seen.insert(key).inserted
            frames[top].seenKeys = seen
        } else {
            for index in frame.keyStart..<keys.count where keys[index] == key {
                duplicate = true
                break
            }
            if existing + 1 >= JSONObject.indexThreshold {
                var seen = Set(keys[frame.keyStart...])
                seen.insert(key)
                frames[top].seenKeys = seen
            }
        }
        if duplicate {
            position = keyOffset
            throw error(.duplicateKey, "duplicate key \(PrintableText.quoted(key))")
        }
        keys.append(key)
        skipWhitespace()
        guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
        guard base[position] == UInt8(ascii: ":") else { throw unexpectedHere() }
        position += 1
    }

    // MARK: Scalars

    private mutating func skipWhitespace() {
        while position < count {
            switch base[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let length = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for index in 0..<length {
            guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
            guard base[position] == text[index] else { throw unexpectedHere() }
            position += 1
        }
    }

    private mutating func parseNumber() throws -> JSONNumber {
        let start = position
        var negative = false
        if base[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
        guard isDigit(base[position]) else { throw error(.invalidNumber, "expected a digit in number") }
        var integral = true
        // Accumulate negatively so Int64.min fits.
        var accumulator: Int64 = 0
        var overflow = false
        if base[position] == UInt8(ascii: "0") {
            position += 1
            if position < count, isDigit(base[position]) {
                throw error(.invalidNumber, "leading zero in number")
            }
        } else {
            while position < count, isDigit(base[position]) {
                let digit = Int64(base[position] &- UInt8(ascii: "0"))
                let (times, o1) = accumulator.multipliedReportingOverflow(by: 10)
                let (next, o2) = times.subtractingReportingOverflow(digit)
                if o1 || o2 { overflow = true }
                accumulator = next
                position += 1
            }
        }
        if position < count, base[position] == UInt8(ascii: ".") {
            integral = false
            position += 1
            guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
            guard isDigit(base[position]) else { throw error(.invalidNumber, "expected a digit after '.'") }
            while position < count, isDigit(base[position]) { position += 1 }
        }
        if position < count, base[position] == UInt8(ascii: "e") || base[position] == UInt8(ascii: "E") {
            integral = false
            position += 1
            if position < count, base[position] == UInt8(ascii: "+") || base[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
            guard isDigit(base[position]) else { throw error(.invalidNumber, "expected a digit in exponent") }
            while position < count, isDigit(base[position]) { position += 1 }
        }
        if integral, !overflow {
            if negative { return .integer(accumulator) }
            if accumulator != Int64.min { return .integer(-accumulator) }
        }
        let digits = UnsafeBufferPointer(start: base + start, count: position - start)
        if let exact = JSONNumberText.exactDouble(digits) { return .double(exact) }
        let text = String(decoding: digits, as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            throw error(.numberOutOfRange, "number \(PrintableText.excerpt(text)) is out of range", at: start)
        }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Reads a string starting at its opening quote; the position ends after the closing quote.
    private mutating func parseString() throws -> String {
        position += 1
        let start = position
        // Fast path: printable ASCII without escapes.
        while position < count {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(start: base + start, count: position - start), as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            position += 1
        }
        return try parseStringSlowly(from: start)
    }

    private mutating func parseStringSlowly(from start: Int) throws -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(position - start + 16)
        buffer.append(contentsOf: UnsafeBufferPointer(start: base + start, count: position - start))
        while true {
            guard position < count else { throw error(.unexpectedEnd, "unexpected end of input in string") }
            let byte = base[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw error(.controlCharacter, "control character \(hexScalar(UInt32(byte))) in string")
            case 0x20..<0x80:
                buffer.append(byte)
                position += 1
            default:
                let length = try validateUTF8Sequence()
                buffer.append(contentsOf: UnsafeBufferPointer(start: base + position, count: length))
                position += length
            }
        }
    }

    /// Checks the multi-byte UTF-8 sequence at the position and returns its length (RFC 3629).
    private func validateUTF8Sequence() throws -> Int {
        let lead = base[position]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw error(.invalidUTF8, "invalid UTF-8 byte \(hexByte(lead))")
        }
        for index in 1..<length {
            guard position + index < count else {
                throw error(.invalidUTF8, "truncated UTF-8 sequence", at: position + index)
            }
            let byte = base[position + index]
            let (minimum, maximum) = index == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
            guard byte >= minimum, byte <= maximum else {
                throw error(.invalidUTF8, "invalid UTF-8 byte \(hexByte(byte))", at: position + index)
            }
        }
        return length
    }

    private mutating func parseEscape(into buffer: inout [UInt8]) throws {
        let escapeStart = position
        position += 1
        guard position < count else { throw error(.unexpectedEnd, "unexpected end of input in string") }
        let byte = base[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): buffer.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            let first = try parseHex4(escapeStart: escapeStart)
            var scalarValue = UInt32(first)
            if (0xD800...0xDBFF).contains(first) {
                guard position + 1 < count, base[position] == UInt8(ascii: "\\"), base[position + 1] == UInt8(ascii: "u")
                else {
                    throw error(.loneSurrogate, "unpaired surrogate \\u\(hex4(first))", at: escapeStart)
                }
                let secondStart = position
                position += 2
                let second = try parseHex4(escapeStart: secondStart)
                guard (0xDC00...0xDFFF).contains(second) else {
                    throw error(.loneSurrogate, "unpaired surrogate \\u\(hex4(first))", at: escapeStart)
                }
                scalarValue = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(first) {
                throw error(.loneSurrogate, "unpaired surrogate \\u\(hex4(first))", at: escapeStart)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else {
                throw error(.loneSurrogate, "invalid escape \\u\(hex4(first))", at: escapeStart)
            }
            if let encoded = UTF8.encode(scalar) { buffer.append(contentsOf: encoded) }
        default:
            position -= 1
            throw error(.invalidEscape, "invalid escape '\\\(printable(byte))'", at: escapeStart)
        }
    }

    /// Reads the four hex digits after `\u`.
    private mutating func parseHex4(escapeStart: Int) throws -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard position < count else { throw error(.unexpectedEnd, "unexpected end of input in string") }
            let byte = base[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidEscape, "invalid \\u escape: expected four hex digits", at: escapeStart)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    // MARK: Errors

    private func unexpectedHere() -> JSONParseError {
        guard position < count else { return error(.unexpectedEnd, "unexpected end of input") }
        let byte = base[position]
        if byte >= 0x80 {
            // Name the character when it is valid UTF-8.
            if let length = try? validateUTF8Sequence() {
                let text = String(decoding: UnsafeBufferPointer(start: base + position, count: length), as: UTF8.self)
                if let scalar = text.unicodeScalars.first, !PrintableText.isPrintable(scalar) {
                    return error(.unexpectedCharacter, "unexpected character \(hexScalar(scalar.value))")
                }
                return error(.unexpectedCharacter, "unexpected character '\(text)'")
            }
            return error(.invalidUTF8, "invalid UTF-8 byte \(hexByte(byte))")
        }
        if byte < 0x20 || byte == 0x7F {
            return error(.unexpectedCharacter, "unexpected character \(hexScalar(UInt32(byte)))")
        }
        return error(.unexpectedCharacter, "unexpected character '\(printable(byte))'")
    }

    private func error(_ code: JSONParseError.Code, _ reason: String, at offset: Int? = nil) -> JSONParseError {
        let offset = min(offset ?? position, count)
        var line = 1
        var column = 1
        for index in 0..<offset {
            let byte = base[index]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONParseError(code: code, offset: offset, line: line, column: column, reason: reason)
    }

    private func printable(_ byte: UInt8) -> String {
        if byte >= 0x20, byte < 0x7F { return String(UnicodeScalar(byte)) }
        return hexScalar(UInt32(byte))
    }

    private func hexByte(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "0x" + (digits.count < 2 ? "0" + digits : digits)
    }

    private func hexScalar(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Number text the parser has already checked against the JSON grammar.
enum JSONNumberText {
    /// The powers of ten a double holds exactly (10^22 is the last).
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// The value of `text` (a valid JSON number) when it can be computed exactly without rounding
    /// twice, else nil (then the caller converts the text the slow way).
    ///
    /// Clinger's fast path: a significand of at most 2^53 is a double exactly, so are 10^0 … 10^22,
    /// and one IEEE multiplication or division of exact operands rounds correctly, giving the same
    /// double as a correctly rounded conversion of the text (most numbers a peer prints, such as
    /// timestamps with microseconds, take this path; no string is built).
    static func exactDouble(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { index = 1 }
        var significand: UInt64 = 0
        var significantDigits = 0
        var scale = 0
        var inFraction = false
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if significand != 0 || byte != UInt8(ascii: "0") {
                    significantDigits += 1
                    // 19 digits always fit a UInt64; more cannot be exact here.
                    guard significantDigits <= 19 else { return nil }
                    significand = significand * 10 + UInt64(byte &- UInt8(ascii: "0"))
                }
                if inFraction { scale -= 1 }
            } else {
                break  // "e" or "E"
            }
            index += 1
        }
        if index < text.count {
            index += 1
            var exponentNegative = false
            if text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
                exponentNegative = text[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponent = 0
            while index < text.count {
                exponent = exponent * 10 + Int(text[index] &- UInt8(ascii: "0"))
                guard exponent <= 400 else { return nil }
                index += 1
            }
            scale += exponentNegative ? -exponent : exponent
        }
        let magnitude: Double
        if significand == 0 {
            magnitude = 0
        } else if significand <= 1 << 53, scale.magnitude < exactPowersOfTen.count {
            let power = exactPowersOfTen[Int(scale.magnitude)]
            magnitude = scale >= 0 ? Double(significand) * power : Double(significand) / power
        } else if let wide = wideDouble(significand, scale: scale) {
            magnitude = wide
        } else {
            return nil
        }
        return negative ? -magnitude : magnitude
    }

    /// 10^0 through 10^19, every power of ten a `UInt64` holds.
    private static let integerPowersOfTen: [UInt64] = {
        var powers: [UInt64] = [1]
        while powers.count < 20 { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()

    /// `significand` × 10^`scale` for significands past 2^53 (up to 19 digits, such as a timestamp
    /// printed to the last digit that tells it apart) and scales from -19 to 19, with one rounding and
    /// one hardware multiplication or division:
    /// - from 10^0 up, the 128-bit product is exact; its top 64 bits, with a sticky last bit when
    ///   anything below them is set, round to the correctly rounded double;
    /// - below 10^0, the significand shifted left is divided so that the quotient has 62 or 63 bits; a
    ///   remainder sets its last bit (sticky), so rounding it to 53 bits gives the correctly rounded
    ///   value, scaled back by an exact power of two.
    /// nil outside these bounds.
    private static func wideDouble(_ significand: UInt64, scale: Int) -> Double? {
        guard scale.magnitude < UInt(integerPowersOfTen.count) else { return nil }
        let power = integerPowersOfTen[Int(scale.magnitude)]
        if scale >= 0 {
            let (high, low) = significand.multipliedFullWidth(by: power)
            guard high != 0 else { return Double(low) }
            let shift = high.leadingZeroBitCount
            var top = high << shift | low >> (UInt64.bitWidth - shift)
            if low << shift != 0 { top |= 1 }
            return Double(sign: .plus, exponent: UInt64.bitWidth - shift, significand: Double(top))
        }
        // significand × 2^shift ÷ power lies in [2^61, 2^63): it fits one 64-bit division.
        let shift = 62 - (UInt64.bitWidth - significand.leadingZeroBitCount) + (UInt64.bitWidth - power.leadingZeroBitCount)
        let high = significand >> (UInt64.bitWidth - shift)
        let low = significand << shift
        var (quotient, remainder) = power.dividingFullWidth((high: high, low: low))
        if remainder != 0 { quotient |= 1 }
        return Double(sign: .plus, exponent: -shift, significand: Double(quotient))
    }
}

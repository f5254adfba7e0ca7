/// A parsed JSON value laid out flat, in document order: one entry per value, object key and
/// container, with no object or array of its own for each container.
///
/// An object's entry is followed by its members, each a `key` entry and then the value's entries; an
/// array's by its elements' entries. A container's entry holds its member count and the position just
/// past its last entry, so a reader steps over a whole member in one move. The scanner that writes it
/// (`JSONScanner.scanDocument`) accepts exactly what `JSONParser` accepts and throws the same errors.
enum JSONTape {
    /// One entry of a tape.
    enum Entry: Sendable {
        /// An object with `count` members, whose entries end just before position `end`.
        case object(count: Int, end: Int)
        /// An array with `count` elements, whose entries end just before position `end`.
        case array(count: Int, end: Int)
        /// An object member's key; its value's entries follow.
        case key(String)
        case string(String)
        case number(JSONNumber)
        case bool(Bool)
        case null
    }

    /// The position just past the value whose entry is at `index`.
    static func end(of index: Int, in tape: [Entry]) -> Int {
        switch tape[index] {
        case .object(_, let end), .array(_, let end): return end
        default: return index + 1
        }
    }

    /// The value whose entries start at `index`, built as a tree (without recursion, as the parser).
    static func value(at index: Int, in tape: [Entry]) -> JSONValue {
        /// A container being rebuilt: its keys (objects only) and values so far, and how many in all.
        struct Open {
            var keys: [String]?
            var values: [JSONValue] = []
            var remaining: Int
        }
        var open: [Open] = []
        var position = index
        while true {
            var finished: JSONValue
            switch tape[position] {
            case .object(let count, _) where count > 0:
                open.append(Open(keys: [], remaining: count))
                position += 1
                continue
            case .array(let count, _) where count > 0:
                open.append(Open(keys: nil, remaining: count))
                position += 1
                continue
            case .key(let key):
                open[open.count - 1].keys?.append(key)
                position += 1
                continue
            case .object: finished = .object(JSONObject())
            case .array: finished = .array([])
            case .string(let text): finished = .string(text)
            case .number(let number): finished = .number(number)
            case .bool(let flag): finished = .bool(flag)
            case .null: finished = .null
            }
            position += 1
            // Attach the finished value to the innermost container, closing those it completes.
            while var top = open.popLast() {
                top.values.append(finished)
                top.remaining -= 1
                guard top.remaining == 0 else {
                    open.append(top)
                    break
                }
                if let keys = top.keys {
                    finished = .object(JSONObject(uniqueMembers: Array(zip(keys, top.values))))
                } else {
                    finished = .array(top.values)
                }
            }
            if open.isEmpty { return finished }
        }
    }
}

extension JSONScanner {
    /// Scans one value from the position on into `tape`, as `parseDocument` parses it: the same input
    /// is accepted, the same error thrown at the same offset. With `wholeInput` only whitespace may
    /// follow the value, else the position is left just past it.
    mutating func scanDocument(into tape: inout [JSONTape.Entry], wholeInput: Bool = true) throws {
        scanning: while true {
            skipWhitespace()
            guard position < count else { throw error(.unexpectedEnd, "unexpected end of input") }
            switch base[position] {
            case UInt8(ascii: "{"):
                try checkDepth()
                position += 1
                skipWhitespace()
                if position < count, base[position] == UInt8(ascii: "}") {
                    position += 1
                    tape.append(.object(count: 0, end: tape.count + 1))
                } else {
                    push(isObject: true, valueStart: tape.count)
                    tape.append(.object(count: 0, end: 0))
                    try parseKey()
                    tape.append(.key(keys[keys.count - 1]))
                    continue scanning
                }
            case UInt8(ascii: "["):
                try checkDepth()
                position += 1
                skipWhitespace()
                if position < count, base[position] == UInt8(ascii: "]") {
                    position += 1
                    tape.append(.array(count: 0, end: tape.count + 1))
                } else {
                    push(isObject: false, valueStart: tape.count)
                    tape.append(.array(count: 0, end: 0))
                    continue scanning
                }
            case UInt8(ascii: "\""):
                tape.append(.string(try parseString()))
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                tape.append(.number(try parseNumber()))
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                tape.append(.bool(true))
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                tape.append(.bool(false))
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                tape.append(.null)
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
                        tape.append(.key(keys[keys.count - 1]))
                    }
                    continue scanning
                }
                if frame.isObject, next == UInt8(ascii: "}") {
                    position += 1
                    tape[frame.valueStart] = .object(count: frame.count, end: tape.count)
                    keys.removeSubrange(frame.keyStart...)
                    frames.removeLast()
                    continue
                }
                if !frame.isObject, next == UInt8(ascii: "]") {
                    position += 1
                    tape[frame.valueStart] = .array(count: frame.count, end: tape.count)
                    frames.removeLast()
                    continue
                }
                throw unexpectedHere()
            }
        }
    }
}

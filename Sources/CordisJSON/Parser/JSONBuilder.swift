/// A parsed JSON value laid out flat, in document order: one entry per value, object key and
/// container, with no object or array of its own for each container.
///
/// An object's entry is followed by its members, each a `key` entry and then the value's entries; an
/// array's by its elements' entries. A container's entry holds its member count and the position just
/// past its last entry, so a reader steps over a whole member in one move. It is written by the
/// parser's own scanner (`JSONTapeBuilder`), so it accepts exactly what `JSONParser` accepts and throws
/// the same errors.
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
            case .number(let number): finished = .number(number.doubleValue)
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

/// What a scan builds from what it reads (`JSONScanner.scan(_:from:maxDepth:into:)`), in document order: a
/// tree of values (`JSONTreeBuilder`, for `JSONParser`) or a flat tape (`JSONTapeBuilder`, for
/// `JSONDocument`). The scanner checks the grammar, the nesting and the keys; a builder only records.
protocol JSONBuilder {
    /// A whole value was read: a scalar, `{}` or `[]`. `nested` when it is inside an open container.
    mutating func value(_ value: JSONValue, nested: Bool)
    /// A number was read, as its text gave it (an integer stays exact for a tape).
    mutating func number(_ number: JSONNumber, nested: Bool)
    /// A non-empty array or object starts; returns where its members start in what the builder keeps
    /// (the frame's `valueStart`).
    mutating func open(isObject: Bool) -> Int
    /// The key of the next member of the innermost object was read (unique in its object).
    mutating func key(_ key: String)
    /// The container of `frame` ended, with `frame.count` members whose keys (for an object) are
    /// `keys`; `nested` when it is itself inside an open container.
    mutating func close(_ frame: JSONScanner.Frame, keys: ArraySlice<String>, nested: Bool)
}

/// Builds the tree of values `JSONParser` returns: the members of the open containers wait on one
/// stack and become an object or an array when theirs ends.
struct JSONTreeBuilder: JSONBuilder {
    private var values: [JSONValue] = []
    /// The value read, once the scan has finished.
    private(set) var result: JSONValue = .null

    mutating func value(_ value: JSONValue, nested: Bool) {
        if nested {
            values.append(value)
        } else {
            result = value
        }
    }

    mutating func number(_ number: JSONNumber, nested: Bool) {
        value(.number(number.doubleValue), nested: nested)
    }

    mutating func open(isObject: Bool) -> Int {
        // Room for a typical message at once, rather than regrowing the stack from one element.
        if values.capacity == 0 { values.reserveCapacity(8) }
        return values.count
    }

    mutating func key(_ key: String) {}

    mutating func close(_ frame: JSONScanner.Frame, keys: ArraySlice<String>, nested: Bool) {
        let built: JSONValue
        if frame.isObject {
            var members: [JSONObject.Element] = []
            members.reserveCapacity(values.count - frame.valueStart)
            for offset in 0..<(values.count - frame.valueStart) {
                members.append((keys[keys.startIndex + offset], values[frame.valueStart + offset]))
            }
            built = .object(JSONObject(uniqueMembers: members))
        } else {
            built = .array(Array(values[frame.valueStart...]))
        }
        values.removeSubrange(frame.valueStart...)
        value(built, nested: nested)
    }
}

/// Builds the tape of a `JSONDocument`: an entry per value, key and container, each container's entry
/// filled in when it ends.
struct JSONTapeBuilder: JSONBuilder {
    private(set) var tape: [JSONTape.Entry] = []

    init() {
        tape.reserveCapacity(8)
    }

    mutating func value(_ value: JSONValue, nested: Bool) {
        switch value {
        case .object: tape.append(.object(count: 0, end: tape.count + 1))
        case .array: tape.append(.array(count: 0, end: tape.count + 1))
        case .string(let text): tape.append(.string(text))
        case .number(let number): tape.append(.number(JSONNumber(number)))
        case .bool(let flag): tape.append(.bool(flag))
        case .null: tape.append(.null)
        }
    }

    mutating func number(_ number: JSONNumber, nested: Bool) {
        tape.append(.number(number))
    }

    mutating func open(isObject: Bool) -> Int {
        tape.append(isObject ? .object(count: 0, end: 0) : .array(count: 0, end: 0))
        return tape.count - 1
    }

    mutating func key(_ key: String) {
        tape.append(.key(key))
    }

    mutating func close(_ frame: JSONScanner.Frame, keys: ArraySlice<String>, nested: Bool) {
        tape[frame.valueStart] = frame.isObject
            ? .object(count: frame.count, end: tape.count) : .array(count: frame.count, end: tape.count)
    }
}

import CordisJSON

/// The direct decoder of the two messages every remote call carries, `call` and `result`, in the exact
/// compact form `WireMessage.encode(into:)` writes them: `{"type":"call","id":1,"service":"clock",
/// "realm":null,"method":"now","args":{}}` and `{"type":"result","id":1,"value":…}`.
///
/// It reads the message's own members straight into the message (no object of members is built, no
/// key is made a `String`, no lookup by key) and hands only `args` to the JSON parser; a result's
/// `value` is read into a `JSONDocument`, checked as the parser checks it but not built into a tree. It
/// accepts a strict subset of what the general decoder accepts and decodes it to the same message:
/// anything else (whitespace, an escape or a non-ASCII byte in a key or a string member, a member it
/// does not know, a repeated one, an id that is not plain digits, a value the parser refuses, bytes
/// after the object) returns nil, and the general decoder then decodes the message or names the error,
/// exactly as it would have without this path.
enum HotMessageDecoder {
    /// The message in `bytes` when it is a `call` or a `result` in the form described above, else nil.
    /// `maxDepth` is the general parser's nesting limit, which the message object itself counts in.
    /// `opening` is the byte that stands for the object's opening brace: a sealed frame's message
    /// starts at the `,` after its MAC (see `FrameOpener`), read in place.
    static func decode(_ bytes: UnsafeRawBufferPointer, opening: UInt8 = UInt8(ascii: "{"), maxDepth: Int) -> WireMessage? {
        guard bytes.first == opening else { return nil }
        var reader = Reader(bytes: bytes, maxDepth: maxDepth)
        reader.position = 1
        if reader.skip(#""type":"call","#) { return reader.call() }
        if reader.skip(#""type":"result","#) { return reader.result() }
        return nil
    }

    /// The members of each message, by bit.
    private enum Key: UInt8 {
        case id = 1, service = 2, realm = 4, method = 8, args = 16, value = 32
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let maxDepth: Int
        var position = 0
        /// The members read so far, one `Key` bit each.
        var seen: UInt8 = 0

        init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        /// Skips `expected` (ASCII) if the bytes at the position are it.
        mutating func skip(_ expected: StaticString) -> Bool {
            guard bytes.hasASCII(expected, at: position) else { return false }
            position += expected.utf8CodeUnitCount
            return true
        }

        mutating func call() -> WireMessage? {
            var id = 0
            var service = ""
            var realm: String?
            var method = ""
            var args = JSONObject()
            let members: UInt8 = Key.id.rawValue | Key.service.rawValue | Key.realm.rawValue | Key.method.rawValue
                | Key.args.rawValue
            repeat {
                guard let key = key(among: members) else { return nil }
                switch key {
                case .id:
                    guard let value = integer() else { return nil }
                    id = value
                case .service:
                    guard let value = string() else { return nil }
                    service = value
                case .method:
                    guard let value = string() else { return nil }
                    method = value
                case .realm:
                    if !skip("null") {
                        guard let value = string() else { return nil }
                        realm = value
                    }
                case .args:
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "{"),
                          case .object(let object)? = nestedValue()
                    else { return nil }
                    args = object
                case .value:
                    return nil
                }
            } while next()
            let required = Key.id.rawValue | Key.service.rawValue | Key.method.rawValue | Key.args.rawValue
            guard atEnd, seen & required == required else { return nil }
            return .call(RemoteCall(id: id, service: service, realm: realm, method: method, args: args))
        }

        mutating func result() -> WireMessage? {
            var id = 0
            var value = JSONDocument(.null)
            repeat {
                guard let key = key(among: Key.id.rawValue | Key.value.rawValue) else { return nil }
                switch key {
                case .id:
                    guard let number = integer() else { return nil }
                    id = number
                case .value:
                    guard let nested = nestedDocument() else { return nil }
                    value = nested
                default:
                    return nil
                }
            } while next()
            let required = Key.id.rawValue | Key.value.rawValue
            guard atEnd, seen & required == required else { return nil }
            return .result(RemoteResult(id: id, document: value))
        }

        /// Reads `"key":` for a member in `members` (`Key` bits) not read before.
        private mutating func key(among members: UInt8) -> Key? {
            guard let (start, end) = plainString() else { return nil }
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
            position += 1
            guard let key = key(from: start, to: end), members & key.rawValue != 0, seen & key.rawValue == 0 else { return nil }
            seen |= key.rawValue
            return key
        }

        /// The key whose name the bytes from `start` to `end` are, if any: told apart by length and first
        /// byte, then compared whole.
        private func key(from start: Int, to end: Int) -> Key? {
            guard end > start else { return nil }
            let candidate: Key
            switch (end - start, bytes[start]) {
            case (2, UInt8(ascii: "i")): candidate = .id
            case (4, UInt8(ascii: "a")): candidate = .args
            case (5, UInt8(ascii: "r")): candidate = .realm
            case (5, UInt8(ascii: "v")): candidate = .value
            case (6, UInt8(ascii: "m")): candidate = .method
            case (7, UInt8(ascii: "s")): candidate = .service
            default: return nil
            }
            return matches(candidate, from: start, to: end) ? candidate : nil
        }

        /// True when the bytes from `start` to `end` are `key`'s name.
        private func matches(_ key: Key, from start: Int, to end: Int) -> Bool {
            let name: StaticString =
                switch key {
                case .id: "id"
                case .service: "service"
                case .realm: "realm"
                case .method: "method"
                case .args: "args"
                case .value: "value"
                }
            return end - start == name.utf8CodeUnitCount && bytes.hasASCII(name, at: start)
        }

        /// Reads a string of printable ASCII without escapes, quotes included; returns where its
        /// characters start and end.
        private mutating func plainString() -> (Int, Int)? {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
            let start = position + 1
            var index = start
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    position = index + 1
                    return (start, index)
                }
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        private mutating func string() -> String? {
            guard let (start, end) = plainString() else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }

        /// Reads a non-negative integer of at most 16 digits, without a leading zero, that a JSON number
        /// carries exactly (up to 2^53 − 1, as the general decoder requires).
        private mutating func integer() -> Int? {
            let start = position
            var value = 0
            while position < bytes.count, position - start < 16 {
                let byte = bytes[position]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                position += 1
            }
            let digits = position - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"), value <= JSONValue.maxSafeInteger else {
                return nil
            }
            guard position < bytes.count, bytes[position] == UInt8(ascii: ",") || bytes[position] == UInt8(ascii: "}")
            else { return nil }
            return value
        }

        /// Parses the member's value with the general parser, one level of nesting used by the message.
        private mutating func nestedValue() -> JSONValue? {
            guard position < bytes.count, bytes[position] > 0x20, maxDepth > 1 else { return nil }
            guard let (value, end) = try? JSONParser(maxDepth: maxDepth - 1).parseValue(in: bytes, at: position) else {
                return nil
            }
            position = end
            return value
        }

        /// Reads the member's value into a document, one level of nesting used by the message.
        private mutating func nestedDocument() -> JSONDocument? {
            guard position < bytes.count, bytes[position] > 0x20, maxDepth > 1 else { return nil }
            guard let (document, end) = try? JSONDocument.read(in: bytes, at: position, maxDepth: maxDepth - 1) else {
                return nil
            }
            position = end
            return document
        }

        /// After a member: true at a comma (another member follows), false at the closing brace.
        private mutating func next() -> Bool {
            guard position < bytes.count else { return false }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                return true
            }
            return false
        }

        /// True when the closing brace is the last byte.
        private var atEnd: Bool {
            position == bytes.count - 1 && bytes[position] == UInt8(ascii: "}")
        }
    }
}

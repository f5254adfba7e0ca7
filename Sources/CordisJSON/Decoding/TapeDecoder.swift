/// The fast path of `JSONValueDecoder.decode(_:from:)` for a document read from bytes: decodes
/// straight from the document's flat form (`JSONTape`), with no tree of values and no record of
/// issues.
///
/// It decodes only what decodes cleanly. At the first request the strict decoder would answer with an
/// issue or an error (a missing key, a wrong JSON type, a number that does not fit, the end of an
/// array, a key left unread, an object of more than 64 members, `superDecoder`) it stops with
/// `TapeFallback`, even when the type catches the error and goes on, and the caller decodes the
/// document's value the usual way, which finds and names every problem. So a value it returns is the one the strict
/// decoder returns, and a failure costs one decoding more.
enum TapeDecoding {
    /// The value, or `TapeFallback` when the strict decoder has to decode it. (A typed throw and no
    /// optional: an optional of a generic type costs a metadata lookup on each call.)
    static func decode<T: Decodable>(
        _ type: T.Type, tape: [JSONTape.Entry], userInfo: [CodingUserInfoKey: any Sendable]
    ) throws(TapeFallback) -> T {
        let state = TapeDecodingState(tape: tape, userInfo: userInfo)
        let value: T
        do {
            value = try TapeDecoder(state: state, index: 0, codingPath: []).decodeValue(T.self)
        } catch {
            throw TapeFallback()
        }
        guard state.isClean else { throw TapeFallback() }
        return value
    }
}

/// The error that ends the fast path; it never leaves `TapeDecoding`.
struct TapeFallback: Error {}

/// What one fast decoding shares between its containers.
final class TapeDecodingState {
    /// A keyed container's object: its member count, the members read, and where the next lookup starts.
    struct ObjectRecord {
        let count: Int
        var read: UInt64 = 0
        /// The tape position of the member after the last one found, and that member's number:
        /// synthesized `Decodable` code asks for the keys in the order they are usually written.
        var cursor: Int
        var cursorMember = 0
    }

    let tape: [JSONTape.Entry]
    let userInfo: [CodingUserInfoKey: Any]
    /// Set at the first request the strict decoder would not answer cleanly.
    var failed = false
    /// One record per keyed container opened, in the order they were opened.
    var objects: [ObjectRecord] = []

    init(tape: [JSONTape.Entry], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.tape = tape
        var info: [CodingUserInfoKey: Any] = [:]
        for (key, value) in userInfo { info[key] = value }
        self.userInfo = info
    }

    /// True when nothing failed and every member of every object opened was read.
    var isClean: Bool {
        !failed && objects.allSatisfy { object in
            let all: UInt64 = object.count == 64 ? .max : (1 << UInt64(object.count)) - 1
            return object.read == all
        }
    }

    /// Marks the fast path failed; throw what it returns.
    func fail() -> TapeFallback {
        failed = true
        return TapeFallback()
    }

    /// Opens a record for a keyed container on the object at `index`.
    func openObject(at index: Int) throws -> Int {
        guard case .object(let count, _) = tape[index], count <= 64 else { throw fail() }
        // One access to the records (see `member`).
        return Self.append(ObjectRecord(count: count, cursor: index + 1), to: &objects)
    }

    /// The tape position of the value of member `name` of object record `record`, marked read; nil when
    /// the object has no such member. The search starts after the member found last and wraps around.
    func member(_ name: String, of record: Int, object: Int) -> Int? {
        // One access to the records for the whole search: each access to a class's stored property is
        // checked for exclusivity at run time.
        Self.find(name, in: &objects[record], object: object, tape: tape)
    }

    private static func append(_ record: ObjectRecord, to records: inout [ObjectRecord]) -> Int {
        if records.capacity == 0 { records.reserveCapacity(4) }
        records.append(record)
        return records.count - 1
    }

    private static func find(_ name: String, in record: inout ObjectRecord, object: Int, tape: [JSONTape.Entry]) -> Int? {
        let count = record.count
        var position = record.cursor
        var member = record.cursorMember
        for _ in 0..<count {
            if member == count {
                member = 0
                position = object + 1
            }
            guard case .key(let key) = tape[position] else { return nil }
            let valuePosition = position + 1
            let next = JSONTape.end(of: valuePosition, in: tape)
            if key == name {
                record.read |= 1 << UInt64(member)
                record.cursor = next
                record.cursorMember = member + 1
                return valuePosition
            }
            position = next
            member += 1
        }
        return nil
    }

    // MARK: Scalars

    func bool(at index: Int) throws -> Bool {
        if case .bool(let flag) = tape[index] { return flag }
        throw fail()
    }

    func string(at index: Int) throws -> String {
        if case .string(let text) = tape[index] { return text }
        throw fail()
    }

    func double(at index: Int) throws -> Double {
        if case .number(let number) = tape[index] { return number.doubleValue }
        throw fail()
    }

    func float(at index: Int) throws -> Float {
        if case .number(let number) = tape[index] {
            let float = Float(number.doubleValue)
            if float.isFinite { return float }
        }
        throw fail()
    }

    func integer<I: FixedWidthInteger>(_ type: I.Type, at index: Int) throws -> I {
        // Beyond ±(2^53 − 1) the strict decoder refuses an integer as not exact: so does this path.
        if case .number(.integer(let integer)) = tape[index], integer.magnitude <= JSONValue.maxSafeInteger.magnitude,
            let exact = I(exactly: integer)
        {
            return exact
        }
        throw fail()
    }

    func isNull(at index: Int) -> Bool {
        if case .null = tape[index] { return true }
        return false
    }
}

/// The `Decoder` of the fast path: one value of the tape.
struct TapeDecoder: Decoder {
    let state: TapeDecodingState
    /// The value's tape position.
    let index: Int
    let codingPath: [any CodingKey]

    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

    func child(_ key: any CodingKey, at index: Int) -> TapeDecoder {
        TapeDecoder(state: state, index: index, codingPath: codingPath + [key])
    }

    /// Decodes a `T` here, taking `JSONValue` as is (as the strict decoder does).
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return try treeValue(T.self) }
        return try T(from: self)
    }

    /// The value here as a tree, as a `T` that is `JSONValue`. Apart from `decodeValue`, so that the
    /// cast's optional of a generic type costs nothing on the way of other types.
    @inline(never)
    private func treeValue<T>(_ type: T.Type) throws -> T {
        guard let value = JSONTape.value(at: index, in: state.tape) as? T else { throw state.fail() }
        return value
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let record = try state.openObject(at: index)
        return KeyedDecodingContainer(TapeKeyedContainer<Key>(decoder: self, record: record))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let count, _) = state.tape[index] else { throw state.fail() }
        return TapeUnkeyedContainer(decoder: self, count: count, position: index + 1)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        TapeSingleValueContainer(decoder: self)
    }
}

/// The keyed container of the fast path.
struct TapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: TapeDecoder
    let record: Int

    var codingPath: [any CodingKey] { decoder.codingPath }
    private var state: TapeDecodingState { decoder.state }

    var allKeys: [Key] {
        var keys: [Key] = []
        var position = decoder.index + 1
        let end = JSONTape.end(of: decoder.index, in: state.tape)
        while position < end {
            if case .key(let name) = state.tape[position], let key = Key(stringValue: name) { keys.append(key) }
            position = JSONTape.end(of: position + 1, in: state.tape)
        }
        return keys
    }

    private func find(_ key: Key) -> Int? {
        state.member(key.stringValue, of: record, object: decoder.index)
    }

    /// The member's position, or the end of the fast path when it is missing.
    private func required(_ key: Key) throws -> Int {
        guard let position = find(key) else { throw state.fail() }
        return position
    }

    /// The member's position, nil when it is missing or `null`.
    private func present(_ key: Key) -> Int? {
        guard let position = find(key), !state.isNull(at: position) else { return nil }
        return position
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let position = find(key) else { return true }
        return state.isNull(at: position)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try state.bool(at: required(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try state.string(at: required(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try state.double(at: required(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try state.float(at: required(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try state.integer(type, at: required(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try state.integer(type, at: required(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try state.integer(type, at: required(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try state.integer(type, at: required(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try state.integer(type, at: required(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try state.integer(type, at: required(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try state.integer(type, at: required(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try state.integer(type, at: required(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try state.integer(type, at: required(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try state.integer(type, at: required(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.child(key, at: required(key)).decodeValue(T.self)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(key).map(state.bool) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(key).map(state.string) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(key).map(state.double) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try present(key).map(state.float) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try integerIfPresent(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try integerIfPresent(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let position = present(key) else { return nil }
        return try decoder.child(key, at: position).decodeValue(T.self)
    }

    private func integerIfPresent<I: FixedWidthInteger>(_ type: I.Type, _ key: Key) throws -> I? {
        guard let position = present(key) else { return nil }
        return try state.integer(type, at: position)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder.child(key, at: required(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.child(key, at: required(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw state.fail() }

    func superDecoder(forKey key: Key) throws -> any Decoder { throw state.fail() }
}

/// The unkeyed container of the fast path.
struct TapeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: TapeDecoder
    let elements: Int
    /// The tape position of the next element.
    var position: Int
    var currentIndex = 0

    init(decoder: TapeDecoder, count: Int, position: Int) {
        self.decoder = decoder
        self.elements = count
        self.position = position
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements }
    var isAtEnd: Bool { currentIndex >= elements }
    private var state: TapeDecodingState { decoder.state }

    /// The next element's position, stepping past it; the end of the fast path at the end of the array.
    private mutating func next() throws -> Int {
        guard !isAtEnd else { throw state.fail() }
        let element = position
        position = JSONTape.end(of: element, in: state.tape)
        currentIndex += 1
        return element
    }

    private mutating func nextDecoder() throws -> TapeDecoder {
        let index = currentIndex
        return decoder.child(IndexKey(index), at: try next())
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return true }
        guard state.isNull(at: position) else { return false }
        _ = try next()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try state.bool(at: next()) }
    mutating func decode(_ type: String.Type) throws -> String { try state.string(at: next()) }
    mutating func decode(_ type: Double.Type) throws -> Double { try state.double(at: next()) }
    mutating func decode(_ type: Float.Type) throws -> Float { try state.float(at: next()) }
    mutating func decode(_ type: Int.Type) throws -> Int { try state.integer(type, at: next()) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(type, at: next()) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(type, at: next()) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(type, at: next()) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(type, at: next()) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try state.integer(type, at: next()) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(type, at: next()) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(type, at: next()) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(type, at: next()) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(type, at: next()) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try nextDecoder().decodeValue(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try nextDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nextDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { throw state.fail() }
}

/// The single-value container of the fast path.
struct TapeSingleValueContainer: SingleValueDecodingContainer {
    let decoder: TapeDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }
    private var state: TapeDecodingState { decoder.state }
    private var index: Int { decoder.index }

    func decodeNil() -> Bool { state.isNull(at: index) }
    func decode(_ type: Bool.Type) throws -> Bool { try state.bool(at: index) }
    func decode(_ type: String.Type) throws -> String { try state.string(at: index) }
    func decode(_ type: Double.Type) throws -> Double { try state.double(at: index) }
    func decode(_ type: Float.Type) throws -> Float { try state.float(at: index) }
    func decode(_ type: Int.Type) throws -> Int { try state.integer(type, at: index) }
    func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(type, at: index) }
    func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(type, at: index) }
    func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(type, at: index) }
    func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(type, at: index) }
    func decode(_ type: UInt.Type) throws -> UInt { try state.integer(type, at: index) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(type, at: index) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(type, at: index) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(type, at: index) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(type, at: index) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(T.self) }
}

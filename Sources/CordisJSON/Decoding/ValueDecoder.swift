/// The `Decoder` behind `JSONValueDecoder` and `ConfigSchema`: decodes from a value, or from no value
/// at all (a placeholder that explores the type when probing, or stays empty after an error).
struct ValueDecoder: Decoder {
    let state: DecodingState
    /// The value at this path; nil means "answer with placeholders".
    let value: JSONValue?
    let codingPath: [any CodingKey]
    /// Without a value: true to answer as if everything were present (probing), false to answer empty.
    var explore = false

    init(state: DecodingState, value: JSONValue?, codingPath: [any CodingKey], explore: Bool = false) {
        self.state = state
        self.value = value
        self.codingPath = codingPath
        self.explore = explore
    }

    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

    var isProbing: Bool { state.mode == .probe }

    func child(_ key: any CodingKey, value: JSONValue?, explore: Bool) -> ValueDecoder {
        ValueDecoder(state: state, value: value, codingPath: codingPath + [key], explore: explore)
    }

    /// Decodes a `T` at this path, taking `JSONValue` as is and guarding probes against recursive types.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self {
            if isProbing { state.recorder.setShape("JSON", at: codingPath) }
            if let result = (value ?? .null) as? T { return result }
        }
        guard value == nil, !PrimitiveTypes.contains(T.self) else { return try T(from: self) }
        if let first = firstCase(of: T.self) {
            if isProbing { state.recorder.setShape(rawValueTypeName(of: T.self) ?? "object", at: codingPath) }
            return first
        }
        let identifier = ObjectIdentifier(T.self)
        guard state.probeStack.count < 32 else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(T.self) nests too deeply to build a placeholder"))
        }
        var decoder = self
        if explore, state.probeStack.contains(identifier) { decoder.explore = false }
        state.probeStack.append(identifier)
        defer { state.probeStack.removeLast() }
        return try T(from: decoder)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch value {
        case .object(let object):
            let use = state.mode == .strict ? state.objectUse(at: codingPath, object: object) : nil
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, object: object, use: use))
        case nil:
            if isProbing { state.recorder.setShape("object", at: codingPath) }
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, object: nil, use: nil))
        case let other?:
            state.record(.typeMismatch, "expected object, got \(other.kindName)", at: codingPath)
            let placeholder = ValueDecoder(state: state, value: nil, codingPath: codingPath)
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: placeholder, object: nil, use: nil))
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch value {
        case .array(let elements):
            return UnkeyedContainer(decoder: self, elements: elements)
        case nil:
            if isProbing { state.recorder.setShape("array", at: codingPath) }
            return UnkeyedContainer(decoder: self, elements: nil)
        case let other?:
            state.record(.typeMismatch, "expected array, got \(other.kindName)", at: codingPath)
            return UnkeyedContainer(decoder: ValueDecoder(state: state, value: nil, codingPath: codingPath), elements: nil)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self)
    }

    // MARK: Scalars

    private func mismatch(_ expected: String, _ got: JSONValue) {
        state.record(.typeMismatch, "expected \(expected), got \(got.kindName)", at: codingPath)
    }

    private func placeholderShape(_ name: String) {
        if isProbing { state.recorder.setShape(name, at: codingPath) }
    }

    func unboxBool() -> Bool {
        guard let value else { placeholderShape("Bool"); return false }
        if case .bool(let flag) = value { return flag }
        mismatch("boolean", value)
        return false
    }

    func unboxString() -> String {
        guard let value else { placeholderShape("String"); return "" }
        if case .string(let text) = value { return text }
        mismatch("string", value)
        return ""
    }

    func unboxDouble() -> Double {
        guard let value else { placeholderShape("Double"); return 0 }
        if case .number(let number) = value { return number }
        mismatch("number", value)
        return 0
    }

    func unboxFloat() -> Float {
        guard let value else { placeholderShape("Float"); return 0 }
        if case .number(let number) = value {
            // A finite number too large for a Float is an error, not infinity.
            let float = Float(number)
            if float.isFinite { return float }
            state.record(.invalidValue, "number \(value) does not fit Float", at: codingPath)
            return 0
        }
        mismatch("number", value)
        return 0
    }

    func unboxInteger<I: FixedWidthInteger>(_ type: I.Type) -> I {
        guard let value else { placeholderShape(I.self == Int.self ? "Int" : "\(I.self)"); return 0 }
        guard case .number(let double) = value else {
            mismatch("integer", value)
            return 0
        }
        guard double.rounded(.towardZero) == double else {
            mismatch("integer", value)
            return 0
        }
        guard let fitted = I(exactly: double) else {
            state.record(.invalidValue, "integer \(value) does not fit \(I.self)", at: codingPath)
            return 0
        }
        // From 2^53 on, doubles are further apart than 1: the text may have held another integer.
        guard double.magnitude <= Double(JSONValue.maxSafeInteger) else {
            state.record(
                .invalidValue,
                "integer \(value) is not exact: a JSON number carries integers up to ±\(JSONValue.maxSafeInteger); send a larger one as a string",
                at: codingPath)
            return 0
        }
        return fitted
    }
}

/// The keyed container over an object (or over nothing, for placeholders and probes).
struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoder
    let object: JSONObject?
    let use: DecodingState.ObjectUse?

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        guard let object else { return [] }
        return object.keys.compactMap { Key(stringValue: $0) }
    }

    private func markRead(_ key: Key) {
        use?.markRead(key.stringValue)
    }

    func contains(_ key: Key) -> Bool {
        markRead(key)
        guard let object else { return decoder.explore }
        return object.contains(key: key.stringValue)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        markRead(key)
        guard let object else { return !decoder.explore }
        return object[key.stringValue]?.isNull ?? true
    }

    private func recordField(_ key: Key, optional: Bool) {
        if decoder.isProbing, decoder.explore, object == nil {
            decoder.state.recorder.addField(at: codingPath + [key], optional: optional)
        }
    }

    func decodeMember<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        markRead(key)
        if let object {
            guard let member = object[key.stringValue] else {
                decoder.state.record(.missingKey, "missing required key \"\(key.stringValue)\"", at: codingPath + [key])
                return try decoder.child(key, value: nil, explore: false).decodeValue(T.self)
            }
            return try decoder.child(key, value: member, explore: false).decodeValue(T.self)
        }
        recordField(key, optional: T.self is any OptionalProbe.Type)
        return try decoder.child(key, value: nil, explore: decoder.explore).decodeValue(T.self)
    }

    func decodeMemberIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        markRead(key)
        if let object {
            guard let member = object[key.stringValue], !member.isNull else { return nil }
            return try decoder.child(key, value: member, explore: false).decodeValue(T.self)
        }
        guard decoder.explore else { return nil }
        recordField(key, optional: true)
        return try decoder.child(key, value: nil, explore: true).decodeValue(T.self)
    }

    /// A member of the object read as is when it has the JSON type asked for; nil sends the request
    /// the long way (a missing key, a wrong type, a probe), which records the issue with its path.
    private func present(_ key: Key) -> JSONValue? {
        guard let object, let position = object.position(of: key.stringValue) else { return nil }
        use?.markRead(at: position)
        return object[position].value
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        if case .bool(let flag)? = present(key) { return flag }
        return try decodeMember(type, forKey: key)
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        if case .string(let text)? = present(key) { return text }
        return try decodeMember(type, forKey: key)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        if case .number(let number)? = present(key) { return number }
        return try decodeMember(type, forKey: key)
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decodeMember(type, forKey: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        if case .number(let number)? = present(key), let exact = JSONValue.safeInteger(number) { return Int(exact) }
        return try decodeMember(type, forKey: key)
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decodeMember(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decodeMember(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decodeMember(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        if case .number(let number)? = present(key), let exact = JSONValue.safeInteger(number) { return exact }
        return try decodeMember(type, forKey: key)
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeMember(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decodeMember(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decodeMember(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decodeMember(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decodeMember(type, forKey: key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decodeMember(type, forKey: key) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        if case .bool(let value)? = present(key) { return value }
        return try decodeMemberIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        if case .string(let value)? = present(key) { return value }
        return try decodeMemberIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        if case .number(let number)? = present(key) { return number }
        return try decodeMemberIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        if case .number(let number)? = present(key), let exact = JSONValue.safeInteger(number) { return Int(exact) }
        return try decodeMemberIfPresent(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try decodeMemberIfPresent(type, forKey: key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try decodeMemberIfPresent(type, forKey: key)
    }

    private func memberDecoder(_ key: any CodingKey) -> ValueDecoder {
        use?.markRead(key.stringValue)
        if let object {
            guard let member = object[key.stringValue] else {
                decoder.state.record(.missingKey, "missing required key \"\(key.stringValue)\"", at: codingPath + [key])
                return decoder.child(key, value: nil, explore: false)
            }
            return decoder.child(key, value: member, explore: false)
        }
        return decoder.child(key, value: nil, explore: decoder.explore)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try memberDecoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try memberDecoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        memberDecoder(NameKey("super"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        memberDecoder(key)
    }
}

/// The unkeyed container over an array (or over nothing, for placeholders and probes).
struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    let elements: [JSONValue]?
    var currentIndex = 0

    init(decoder: ValueDecoder, elements: [JSONValue]?) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    var count: Int? {
        if let elements { return elements.count }
        return decoder.explore ? 1 : 0
    }

    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    private mutating func nextDecoder() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                JSONValue.self,
                .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "expected another element, got the end of the array"))
        }
        let value = elements?[currentIndex]
        let child = decoder.child(IndexKey(currentIndex), value: value, explore: elements == nil && decoder.explore)
        currentIndex += 1
        return child
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return true }
        if let elements {
            guard elements[currentIndex].isNull else { return false }
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decodeNext<T: Decodable>(_ type: T.Type) throws -> T {
        try nextDecoder().decodeValue(T.self)
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeNext(type) }
    mutating func decode(_ type: String.Type) throws -> String { try decodeNext(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try decodeNext(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodeNext(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try decodeNext(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeNext(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeNext(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeNext(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeNext(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeNext(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeNext(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeNext(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeNext(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeNext(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeNext(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try nextDecoder().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nextDecoder().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try nextDecoder()
    }
}

/// The single-value container: the scalars, and `decode<T>` at the same path.
struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        guard let value = decoder.value else { return !decoder.explore }
        return value.isNull
    }

    func decode(_ type: Bool.Type) throws -> Bool { decoder.unboxBool() }
    func decode(_ type: String.Type) throws -> String { decoder.unboxString() }
    func decode(_ type: Double.Type) throws -> Double { decoder.unboxDouble() }
    func decode(_ type: Float.Type) throws -> Float { decoder.unboxFloat() }
    func decode(_ type: Int.Type) throws -> Int { decoder.unboxInteger(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { decoder.unboxInteger(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { decoder.unboxInteger(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { decoder.unboxInteger(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { decoder.unboxInteger(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { decoder.unboxInteger(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { decoder.unboxInteger(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { decoder.unboxInteger(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { decoder.unboxInteger(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { decoder.unboxInteger(UInt64.self) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(T.self) }
}

/// The scalar types the containers answer themselves.
enum PrimitiveTypes {
    static let identifiers: Set<ObjectIdentifier> = [
        ObjectIdentifier(Bool.self), ObjectIdentifier(String.self), ObjectIdentifier(Double.self),
        ObjectIdentifier(Float.self), ObjectIdentifier(Int.self), ObjectIdentifier(Int8.self),
        ObjectIdentifier(Int16.self), ObjectIdentifier(Int32.self), ObjectIdentifier(Int64.self),
        ObjectIdentifier(UInt.self), ObjectIdentifier(UInt8.self), ObjectIdentifier(UInt16.self),
        ObjectIdentifier(UInt32.self), ObjectIdentifier(UInt64.self),
    ]

    static func contains(_ type: Any.Type) -> Bool { identifiers.contains(ObjectIdentifier(type)) }
}

/// Lets a probe tell an `Optional` type from others.
protocol OptionalProbe {}
extension Optional: OptionalProbe {}

/// The first case of a `CaseIterable` type, used as its placeholder.
func firstCase<T>(of type: T.Type) -> T? {
    guard let iterable = type as? any CaseIterable.Type else { return nil }
    func first<C: CaseIterable>(_ type: C.Type) -> Any? { type.allCases.first }
    return first(iterable) as? T
}

/// The name of a `RawRepresentable` type's raw value type (`String` for `enum Mode: String`).
func rawValueTypeName<T>(of type: T.Type) -> String? {
    guard let representable = type as? any RawRepresentable.Type else { return nil }
    func rawName<R: RawRepresentable>(_ type: R.Type) -> String { "\(R.RawValue.self)" }
    return rawName(representable)
}

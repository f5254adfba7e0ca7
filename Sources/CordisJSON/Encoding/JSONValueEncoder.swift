/// Encodes any `Encodable` into a `JSONValue`, keeping object keys in the order they were encoded.
///
/// Integers become integers (a `UInt64` above `Int64.max` becomes a double), `Double` and `Float`
/// become doubles, `nil` from `encodeIfPresent` is left out, and a `JSONValue` is taken as is.
/// Throws `EncodingError.invalidValue` for a non-finite number, which JSON cannot express.
public struct JSONValueEncoder: Sendable {
    /// Values handed to the encoded types through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// An encoder with the given user info.
    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.userInfo = userInfo
    }

    /// Encodes `value`. Throws `EncodingError` (non-finite numbers, a type that encodes nothing).
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        var info: [CodingUserInfoKey: Any] = [:]
        for (key, item) in userInfo { info[key] = item }
        let root = EncodingNode()
        try ValueEncoder(node: root, path: nil, userInfo: info).encodeValue(value)
        guard let result = root.resolved() else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(T.self) encoded no value"))
        }
        return result
    }
}

/// A value under construction: a scalar, or an object or array whose members are still being encoded.
///
/// An object's or array's scalars go straight into its `JSONObject` or array; only a member or element
/// encoded through a nested encoder or container gets a node of its own, kept by its position (its
/// place in the object holds `null` until the node is resolved). An object of scalars only is done as
/// soon as it is encoded.
final class EncodingNode {
    enum Content {
        case empty
        case value(JSONValue)
        case object(JSONObject, nodes: [Int: EncodingNode])
        case array([JSONValue], nodes: [Int: EncodingNode])
    }

    var content: Content = .empty

    func resolved() -> JSONValue? {
        switch content {
        case .empty: return nil
        case .value(let value): return value
        case .object(let object, let nodes):
            guard !nodes.isEmpty else { return .object(object) }
            var members: [JSONObject.Element] = []
            members.reserveCapacity(object.count)
            for (position, member) in object.enumerated() {
                guard let node = nodes[position] else {
                    members.append(member)
                    continue
                }
                if let value = node.resolved() { members.append((member.key, value)) }
            }
            return .object(JSONObject(uniqueMembers: members))
        case .array(let values, let nodes):
            guard !nodes.isEmpty else { return .array(values) }
            return .array(values.indices.map { position in
                guard let node = nodes[position] else { return values[position] }
                return node.resolved() ?? .object(JSONObject())
            })
        }
    }

    /// Runs `body` on the object and its nodes, making this node an object if it is not one yet. Both
    /// are taken out of `content` first, so they grow in place instead of being copied per member.
    private func withObject<Result>(_ body: (inout JSONObject, inout [Int: EncodingNode]) -> Result) -> Result {
        var object = JSONObject()
        var nodes: [Int: EncodingNode] = [:]
        if case .object(let existing, let existingNodes) = content {
            object = existing
            nodes = existingNodes
        }
        content = .empty
        defer { content = .object(object, nodes: nodes) }
        return body(&object, &nodes)
    }

    /// Runs `body` on the elements and their nodes, making this node an array if it is not one yet (in
    /// place, as above).
    private func withArray<Result>(_ body: (inout [JSONValue], inout [Int: EncodingNode]) -> Result) -> Result {
        var values: [JSONValue] = []
        var nodes: [Int: EncodingNode] = [:]
        if case .array(let existing, let existingNodes) = content {
            values = existing
            nodes = existingNodes
        }
        content = .empty
        defer { content = .array(values, nodes: nodes) }
        return body(&values, &nodes)
    }

    /// The node for member `key`, for a value encoded through a nested encoder: the one encoded before
    /// under that key, or a new one in the place of a scalar set before, or at the end.
    func member(_ key: String) -> EncodingNode {
        withObject { object, nodes in
            let position: Int
            if let existing = object.position(of: key) {
                if let node = nodes[existing] { return node }
                position = existing
            } else {
                position = object.count
                object[key] = .null
            }
            let node = EncodingNode()
            nodes[position] = node
            return node
        }
    }

    /// Sets member `key` to `value` (a scalar: no node of its own), in the place of an earlier one.
    func setMember(_ key: String, to value: JSONValue) {
        withObject { object, nodes in
            object[key] = value
            if !nodes.isEmpty, let position = object.position(of: key) { nodes[position] = nil }
        }
    }

    func becomeObject() {
        if case .object = content { return }
        // Room for a few members, so a small struct's object is not regrown member by member.
        var object = JSONObject()
        object.reserveCapacity(4)
        content = .object(object, nodes: [:])
    }

    /// Appends a new element node, for a value encoded through a nested encoder.
    func appendElement() -> EncodingNode {
        let node = EncodingNode()
        withArray { values, nodes in
            nodes[values.count] = node
            values.append(.null)
        }
        return node
    }

    /// Appends a scalar element (no node of its own).
    func appendElement(_ value: JSONValue) {
        withArray { values, _ in values.append(value) }
    }

    func becomeArray() {
        if case .array = content { return }
        content = .array([], nodes: [:])
    }

    var elementCount: Int {
        if case .array(let values, _) = content { return values.count }
        return 0
    }
}

/// A coding path kept as a chain to the root, so that a nested encoder costs no array copy; the
/// path is built only when asked for (by an error, or a type that reads it).
final class CodingPathLink {
    let key: any CodingKey
    let parent: CodingPathLink?

    init(key: any CodingKey, parent: CodingPathLink?) {
        self.key = key
        self.parent = parent
    }

    static func path(to link: CodingPathLink?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var current = link
        while let step = current {
            keys.append(step.key)
            current = step.parent
        }
        return keys.reversed()
    }
}

struct ValueEncoder: Encoder {
    let node: EncodingNode
    let path: CodingPathLink?
    let userInfo: [CodingUserInfoKey: Any]

    var codingPath: [any CodingKey] { CodingPathLink.path(to: path) }

    func encodeValue<T: Encodable>(_ value: T) throws {
        if T.self == JSONValue.self, let json = value as? JSONValue {
            node.content = .value(json)
            return
        }
        try value.encode(to: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedEncoding<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedEncoding(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueEncoding(encoder: self)
    }

    func child(_ key: any CodingKey, node: EncodingNode) -> ValueEncoder {
        ValueEncoder(node: node, path: CodingPathLink(key: key, parent: path), userInfo: userInfo)
    }

    /// An integer as a JSON number; throws beyond ±`JSONValue.maxSafeInteger`, which a number (a
    /// `Double`) cannot carry exactly, rather than rounding it.
    static func integer(_ value: some BinaryInteger, at codingPath: @autoclosure () -> [any CodingKey]) throws -> JSONValue {
        if value.magnitude <= JSONValue.maxSafeInteger.magnitude { return .number(Double(value)) }
        throw EncodingError.invalidValue(
            value,
            .init(
                codingPath: codingPath(),
                debugDescription:
                    "integer \(value) is beyond ±\(JSONValue.maxSafeInteger), which a JSON number carries exactly; encode it as a string"))
    }

    static func number(_ value: Double, at codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) cannot be written as JSON"))
        }
        return .number(value)
    }
}

struct KeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func memberEncoder(_ key: any CodingKey) -> ValueEncoder {
        encoder.child(key, node: encoder.node.member(key.stringValue))
    }

    mutating func encodeNil(forKey key: Key) throws {
        memberEncoder(key).node.content = .value(.null)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try memberEncoder(key).encodeValue(value)
    }

    // The scalars go straight into the member: no nested encoder, no single-value container.
    private func set(_ value: JSONValue, forKey key: Key) { encoder.node.setMember(key.stringValue, to: value) }

    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(try ValueEncoder.integer(value, at: codingPath + [key]), forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard value.isFinite else { return try memberEncoder(key).encodeValue(value) }
        set(.number(value), forKey: key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        guard value.isFinite else { return try memberEncoder(key).encodeValue(value) }
        set(.number(Double(value)), forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        memberEncoder(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        memberEncoder(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { memberEncoder(NameKey("super")) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { memberEncoder(key) }
}

struct UnkeyedEncoding: UnkeyedEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.node.elementCount }

    private func elementEncoder() -> ValueEncoder {
        let index = encoder.node.elementCount
        return encoder.child(IndexKey(index), node: encoder.node.appendElement())
    }

    mutating func encodeNil() throws {
        elementEncoder().node.content = .value(.null)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try elementEncoder().encodeValue(value)
    }

    // The common scalars go straight into a new element.
    private func append(_ value: JSONValue) { encoder.node.appendElement(value) }

    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Int) throws { append(try ValueEncoder.integer(value, at: codingPath + [IndexKey(count)])) }
    mutating func encode(_ value: Int64) throws { append(try ValueEncoder.integer(value, at: codingPath + [IndexKey(count)])) }
    mutating func encode(_ value: Double) throws {
        guard value.isFinite else { return try elementEncoder().encodeValue(value) }
        append(.number(value))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        elementEncoder().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        elementEncoder().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { elementEncoder() }
}

struct SingleValueEncoding: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ value: JSONValue) { encoder.node.content = .value(value) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(try ValueEncoder.number(value, at: codingPath)) }
    mutating func encode(_ value: Float) throws { set(try ValueEncoder.number(Double(value), at: codingPath)) }
    mutating func encode(_ value: Int) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: Int8) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: Int16) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: Int32) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: Int64) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: UInt) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: UInt8) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: UInt16) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: UInt32) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode(_ value: UInt64) throws { set(try ValueEncoder.integer(value, at: codingPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }
}

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
final class EncodingNode {
    enum Content {
        case empty
        case value(JSONValue)
        case object(keys: [String], nodes: [String: EncodingNode])
        case array([EncodingNode])
    }

    var content: Content = .empty

    func resolved() -> JSONValue? {
        switch content {
        case .empty: return nil
        case .value(let value): return value
        case .object(let keys, let nodes):
            var members: [JSONObject.Element] = []
            members.reserveCapacity(keys.count)
            for key in keys {
                if let value = nodes[key]?.resolved() { members.append((key, value)) }
            }
            return .object(JSONObject(uniqueMembers: members))
        case .array(let nodes):
            return .array(nodes.map { $0.resolved() ?? .object(JSONObject()) })
        }
    }

    /// The node for `key`, making this node an object if it is not one yet.
    func member(_ key: String) -> EncodingNode {
        var keys: [String] = []
        var nodes: [String: EncodingNode] = [:]
        if case .object(let existingKeys, let existingNodes) = content {
            if let existing = existingNodes[key] { return existing }
            keys = existingKeys
            nodes = existingNodes
        }
        // Released before the change, so the arrays are grown in place, not copied per member.
        content = .empty
        let node = EncodingNode()
        keys.append(key)
        nodes[key] = node
        content = .object(keys: keys, nodes: nodes)
        return node
    }

    /// Sets member `key` to `value` (a scalar: no node of its own is needed until it is read back).
    func setMember(_ key: String, to value: JSONValue) {
        member(key).content = .value(value)
    }

    func becomeObject() {
        if case .object = content { return }
        content = .object(keys: [], nodes: [:])
    }

    /// Appends a new element node, making this node an array if it is not one yet.
    func appendElement() -> EncodingNode {
        var nodes: [EncodingNode] = []
        if case .array(let existing) = content { nodes = existing }
        content = .empty
        let node = EncodingNode()
        nodes.append(node)
        content = .array(nodes)
        return node
    }

    func becomeArray() {
        if case .array = content { return }
        content = .array([])
    }

    var elementCount: Int {
        if case .array(let nodes) = content { return nodes.count }
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

    static func number(_ value: Double, at codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) cannot be written as JSON"))
        }
        return .number(.double(value))
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
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.integer(value), forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard value.isFinite else { return try memberEncoder(key).encodeValue(value) }
        set(.number(.double(value)), forKey: key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        guard value.isFinite else { return try memberEncoder(key).encodeValue(value) }
        set(.number(.double(Double(value))), forKey: key)
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
    private func append(_ value: JSONValue) { encoder.node.appendElement().content = .value(value) }

    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Int) throws { append(.integer(value)) }
    mutating func encode(_ value: Int64) throws { append(.integer(value)) }
    mutating func encode(_ value: Double) throws {
        guard value.isFinite else { return try elementEncoder().encodeValue(value) }
        append(.number(.double(value)))
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
    mutating func encode(_ value: Int) throws { set(.integer(value)) }
    mutating func encode(_ value: Int8) throws { set(.integer(value)) }
    mutating func encode(_ value: Int16) throws { set(.integer(value)) }
    mutating func encode(_ value: Int32) throws { set(.integer(value)) }
    mutating func encode(_ value: Int64) throws { set(.integer(value)) }
    mutating func encode(_ value: UInt) throws { set(.integer(value)) }
    mutating func encode(_ value: UInt8) throws { set(.integer(value)) }
    mutating func encode(_ value: UInt16) throws { set(.integer(value)) }
    mutating func encode(_ value: UInt32) throws { set(.integer(value)) }
    mutating func encode(_ value: UInt64) throws { set(.integer(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }
}

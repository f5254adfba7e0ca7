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
        try ValueEncoder(node: root, codingPath: [], userInfo: info).encodeValue(value)
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
            keys = existingKeys
            nodes = existingNodes
        }
        if let existing = nodes[key] { return existing }
        let node = EncodingNode()
        keys.append(key)
        nodes[key] = node
        content = .object(keys: keys, nodes: nodes)
        return node
    }

    func becomeObject() {
        if case .object = content { return }
        content = .object(keys: [], nodes: [:])
    }

    /// Appends a new element node, making this node an array if it is not one yet.
    func appendElement() -> EncodingNode {
        var nodes: [EncodingNode] = []
        if case .array(let existing) = content { nodes = existing }
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

struct ValueEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    func encodeValue<T: Encodable>(_ value: T) throws {
        if let json = value as? JSONValue {
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
        ValueEncoder(node: node, codingPath: codingPath + [key], userInfo: userInfo)
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

/// A JSON object that keeps its keys in the order they were read or inserted, with keyed lookup.
///
/// Keys are unique: setting an existing key replaces its value in place. Lookup is a linear scan for
/// small objects and a hash index once the object grows past `indexThreshold` keys. Equality and
/// hashing ignore key order (JSON objects are unordered); compare `keys` to check the order too.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One member of the object.
    public typealias Element = (key: String, value: JSONValue)

    /// The member count from which a hash index is kept alongside the ordered members.
    public static let indexThreshold = 12

    @usableFromInline var members: [Element]
    @usableFromInline var index: [String: Int]?

    /// An empty object.
    public init() {
        members = []
        index = nil
    }

    /// An object with the given members in order; a repeated key keeps its first position and last value.
    public init(_ members: some Sequence<Element>) {
        self.init()
        for member in members { self[member.key] = member.value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }

    /// Builds an object from members already known to have unique keys (the parser checks).
    init(uniqueMembers: [Element]) {
        members = uniqueMembers
        index = nil
        if members.count >= Self.indexThreshold { rebuildIndex() }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { members.count }
    public subscript(position: Int) -> Element { members[position] }

    /// Makes room for `capacity` members without regrowing.
    public mutating func reserveCapacity(_ capacity: Int) {
        members.reserveCapacity(capacity)
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// The values in key order.
    public var values: [JSONValue] { members.map(\.value) }

    /// The position of `key`, or nil when the object does not have it.
    public func position(of key: String) -> Int? {
        if let index { return index[key] }
        for position in members.indices where members[position].key == key { return position }
        return nil
    }

    /// True when the object has `key`.
    public func contains(key: String) -> Bool { position(of: key) != nil }

    /// The value for `key`; setting nil removes the key, setting a new key appends it at the end.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return members[position].value
        }
        set {
            if let position = position(of: key) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                    if index != nil { rebuildIndex() }
                }
            } else if let newValue {
                members.append((key, newValue))
                if index != nil {
                    index?[key] = members.count - 1
                } else if members.count >= Self.indexThreshold {
                    rebuildIndex()
                }
            }
        }
    }

    /// Removes `key` and returns its value, or nil when absent.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let old = self[key]
        self[key] = nil
        return old
    }

    private mutating func rebuildIndex() {
        guard members.count >= Self.indexThreshold else {
            index = nil
            return
        }
        var built: [String: Int] = [:]
        built.reserveCapacity(members.count)
        for (position, member) in members.enumerated() { built[member.key] = position }
        index = built
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (position, member) in lhs.members.enumerated() {
            // Fast path: same key at the same position.
            if position < rhs.members.count, rhs.members[position].key == member.key {
                if rhs.members[position].value != member.value { return false }
                continue
            }
            guard let other = rhs[member.key], other == member.value else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        var sum = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            sum &+= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }
}

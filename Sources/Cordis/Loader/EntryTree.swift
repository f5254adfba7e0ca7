import CordisJSON

/// A node's whole plugin tree, as stored in its entries file: `{ "version": 1, "entries": [...] }`.
///
/// Reads that form or a bare array of entries (the cordis-ios format, taken as version 1); refuses a
/// version above `currentVersion`. Unknown top-level fields are kept. Writes the object form, pretty,
/// two-space indented, `version` and `entries` first (`serializedList()` writes the bare array).
public struct EntryTree: Sendable, Hashable {
    /// The file version this build writes and the highest it reads.
    public static let currentVersion = 1

    /// The top-level entries, in file order.
    public var entries: [Entry]
    /// Unknown top-level fields, kept in file order and written after `entries`.
    public var extra: JSONObject

    /// A tree with the given entries.
    public init(entries: [Entry] = [], extra: JSONObject = [:]) {
        self.entries = entries
        self.extra = extra
    }

    /// Reads a tree from a parsed entries file and checks its ids. Throws `EntryError`.
    public init(json: JSONValue) throws {
        var extra = JSONObject()
        let list: [JSONValue]
        switch json {
        case .array(let elements):
            list = elements
        case .object(let object):
            switch object["version"] {
            case nil:
                throw EntryError(code: .invalidDocument, message: "the entries file has no \"version\"")
            case .number?:
                guard let version = object["version"]?.int64Value, version >= 1 else {
                    throw EntryError(
                        code: .invalidDocument, message: "\"version\" must be a positive integer, got \(object["version"] ?? .null)")
                }
                guard version <= Int64(Self.currentVersion) else {
                    throw EntryError(
                        code: .unsupportedVersion,
                        message: "entries file version \(version) is newer than this build reads (\(Self.currentVersion)); upgrade Cordis")
                }
            case let other?:
                throw EntryError(code: .invalidDocument, message: "\"version\" must be an integer, got \(other.kindName)")
            }
            switch object["entries"] {
            case nil: list = []
            case .array(let elements)?: list = elements
            case let other?:
                throw EntryError(code: .invalidDocument, message: "\"entries\" must be an array, got \(other.kindName)")
            }
            for (key, value) in object where key != "version" && key != "entries" { extra[key] = value }
        default:
            throw EntryError(
                code: .invalidDocument,
                message: "the entries file must be an object with \"version\" and \"entries\", or an array of entries")
        }
        var entries: [Entry] = []
        entries.reserveCapacity(list.count)
        for (index, element) in list.enumerated() {
            entries.append(try Entry(json: element, location: "entries[\(index)]"))
        }
        self.init(entries: entries, extra: extra)
        try validate()
    }

    /// Parses and reads an entries file's bytes. Throws `JSONParseError` or `EntryError`.
    public init(parsing bytes: [UInt8]) throws {
        try self.init(json: JSONParser().parse(bytes))
    }

    /// Checks every id in the tree (valid, and unique across all levels), that `inject` and `intercept`
    /// name each service once (and `inject` only on plugin entries), and the tree's limits
    /// (`checkLimits()`). Throws `EntryError`.
    public func validate() throws {
        try checkLimits()
        var seen: Set<String> = []
        var pending: [Entry] = entries.reversed()
        while let entry = pending.popLast() {
            guard Entry.isValidID(entry.id) else {
                throw EntryError(
                    code: .invalidID, entryID: entry.id,
                    message: "entry \"\(entry.id)\": invalid id: use 1 to 64 characters of A-Z a-z 0-9 . _ -")
            }
            guard seen.insert(entry.id).inserted else {
                throw EntryError(code: .duplicateID, entryID: entry.id, message: "entry \"\(entry.id)\": duplicate id")
            }
            try entry.checkServiceFields()
            if let children = entry.children { pending.append(contentsOf: children.reversed()) }
        }
    }

    /// Checks `inject` and `intercept` of every entry (see `Entry.checkServiceFields()`).
    public func checkServiceFields() throws {
        var pending: [Entry] = entries.reversed()
        while let entry = pending.popLast() {
            try entry.checkServiceFields()
            if let children = entry.children { pending.append(contentsOf: children.reversed()) }
        }
    }

    /// Every entry of the tree, depth first in file order, with the id of its parent group.
    public var allEntries: [(entry: Entry, parent: String?)] {
        var result: [(entry: Entry, parent: String?)] = []
        var pending: [(entry: Entry, parent: String?)] = entries.reversed().map { ($0, nil) }
        while let item = pending.popLast() {
            result.append(item)
            if let children = item.entry.children {
                pending.append(contentsOf: children.reversed().map { ($0, item.entry.id) })
            }
        }
        return result
    }

    /// The entry with `id`, wherever it is in the tree.
    public func entry(id: String) -> Entry? {
        allEntries.first { $0.entry.id == id }?.entry
    }

    /// The tree as the entries file's JSON object.
    public func json() -> JSONValue {
        var members: [JSONObject.Element] = [
            ("version", .integer(Self.currentVersion)), ("entries", .array(entries.map { $0.json() })),
        ]
        for (key, value) in extra where key != "version" && key != "entries" { members.append((key, value)) }
        return .object(JSONObject(members))
    }

    /// The entries file's bytes: pretty JSON with two-space indentation and a final newline.
    public func serialized() -> [UInt8] {
        json().serialized(.pretty)
    }

    /// The top-level entries as a bare array (cordis-ios's file form, read as version 1), in the same
    /// layout as `serialized()`; unknown top-level fields have no place in it.
    public func serializedList() -> [UInt8] {
        JSONValue.array(entries.map { $0.json() }).serialized(.pretty)
    }
}

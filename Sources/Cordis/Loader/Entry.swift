import CordisJSON

/// One entry of a node's plugin tree, as stored in the entries file: a plugin
/// instance, or a group (non-nil `children`) of entries.
///
/// Fields the file has but this type does not know are kept in `extra` and written back verbatim.
/// Equality ignores the order of `isolate` keys (the file keeps it).
public struct Entry: Sendable, Hashable {
    /// The plugin name written for a group.
    public static let groupPlugin = "group"

    /// The entry's id, unique in the whole tree.
    public var id: String
    /// The catalog name of the plugin; `"group"` for a group.
    public var plugin: String
    /// True when the entry (and, for a group, everything under it) does not run.
    public var disabled: Bool
    /// Service name to realm for the services this entry isolates; nil when the entry has no `isolate`.
    public var isolate: [String: IsolateSpec]? {
        didSet { isolateOrder = Self.order(isolate ?? [:], keeping: isolateOrder) }
    }
    /// Services the entry's fiber injects beside its plugin's own (cordis's entry `inject`): a required
    /// one holds the fiber `pending` until it is provided, an optional one only reloads it on a change.
    /// Only plugin entries take it.
    public var inject: [Dependency]
    /// Per-service configuration for this entry's context and, for a group, its whole subtree (cordis's
    /// entry `intercept`): what `ctx.interceptConfig` returns to services for the plugins here. A
    /// member's own entry wins over its groups, service by service.
    public var intercept: JSONObject
    /// The plugin's configuration, decoded strictly by the Loader; nil when absent.
    public var config: JSONValue?
    /// The entries of a group; non-nil (even empty) makes the entry a group.
    public var children: [Entry]?
    /// Unknown fields, kept in file order and written back after the known ones.
    public var extra: JSONObject

    /// The order `isolate` keys are written in: as read, then new keys sorted.
    var isolateOrder: [String]

    /// Creates an entry; pass `children` (even `[]`) to make a group, whose `plugin` is then `"group"`
    /// unless given.
    public init(
        id: String, plugin: String? = nil, disabled: Bool = false, isolate: [String: IsolateSpec]? = nil,
        config: JSONValue? = nil, children: [Entry]? = nil, inject: [Dependency] = [], intercept: JSONObject = [:],
        extra: JSONObject = [:]
    ) {
        self.id = id
        self.plugin = plugin ?? Self.groupPlugin
        self.disabled = disabled
        self.isolate = isolate
        self.inject = inject
        self.intercept = intercept
        self.config = config
        self.children = children
        self.extra = extra
        self.isolateOrder = Self.order(isolate ?? [:], keeping: [])
    }

    /// True when the entry is a group.
    public var isGroup: Bool { children != nil }

    /// The `isolate` members in file order.
    public var orderedIsolate: [(service: String, value: IsolateSpec)] {
        isolateOrder.compactMap { key in isolate?[key].map { (key, $0) } }
    }

    /// The services this entry isolates, none when `isolate` is nil.
    var isolates: [String: IsolateSpec] { isolate ?? [:] }

    /// True when `id` is 1–64 characters of `A-Z a-z 0-9 . _ -`.
    public static func isValidID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    static func order(_ isolate: [String: IsolateSpec], keeping previous: [String]) -> [String] {
        var order = previous.filter { isolate[$0] != nil }
        let known = Set(order)
        order += isolate.keys.filter { !known.contains($0) }.sorted()
        return order
    }

    public static func == (lhs: Entry, rhs: Entry) -> Bool {
        lhs.id == rhs.id && lhs.plugin == rhs.plugin && lhs.disabled == rhs.disabled && lhs.isolate == rhs.isolate
            && lhs.inject == rhs.inject && lhs.intercept == rhs.intercept && lhs.config == rhs.config
            && lhs.children == rhs.children && lhs.extra == rhs.extra
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(plugin)
        hasher.combine(disabled)
        hasher.combine(isolate)
        hasher.combine(inject)
        hasher.combine(intercept)
        hasher.combine(config)
        hasher.combine(children)
        hasher.combine(extra)
    }
}

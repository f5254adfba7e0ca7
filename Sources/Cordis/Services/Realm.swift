/// The space in which a service name resolves to one provider.
///
/// The root realm is shared by the whole tree; `isolate` gives a subtree either a realm private to one
/// context or a shared realm named by a label (the same label means the same realm, per service).
public enum Realm: Sendable, Hashable, CustomStringConvertible {
    /// The default realm.
    case root
    /// A shared realm: every context isolated with this label sees the same providers.
    case label(String)
    /// A realm private to the context that created it; it never leaves its node.
    case `private`(Int)

    /// The shared label, or nil for the root and private realms.
    public var label: String? {
        if case .label(let label) = self { return label }
        return nil
    }

    /// The realm's number (cordis-ios's `Realm.id`): a private realm's, unique within its root context;
    /// 0 for the root realm and for shared ones, which are told apart by their label (compare realms
    /// with `==`).
    public var id: UInt64 {
        if case .private(let id) = self { return UInt64(clamping: id) }
        return 0
    }

    /// The realm's name (cordis-ios's `Realm.name`): `root`, the label, or `private#N`.
    public var name: String { description }

    /// `root`, the label, or `private#N`.
    public var description: String {
        switch self {
        case .root: return "root"
        case .label(let label): return label
        case .private(let id): return "private#\(id)"
        }
    }
}

/// A service name resolved in a realm: the unit of "one provider at a time".
public struct ServiceSlot: Sendable, Hashable, CustomStringConvertible {
    /// The service name.
    public let name: String
    /// The realm it resolves in.
    public let realm: Realm

    /// Creates a slot.
    public init(name: String, realm: Realm) {
        self.name = name
        self.realm = realm
    }

    /// `name` or `name@realm`.
    public var description: String { realm == .root ? name : "\(name)@\(realm)" }
}

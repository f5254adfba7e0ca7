/// The space in which a service name resolves to one provider (cordis-ios's `Realm`: an `id` and a
/// `name`).
///
/// The root realm is shared by the whole tree; `isolate` gives a subtree either a private realm, made by
/// `makeRealm(name:)` and unique within its root context, or a shared realm named by a label
/// (`Realm.label("team")`: the same label means the same realm, per service, and on every node of a
/// cluster). A private realm never leaves its node. Compare realms with `==`.
public struct Realm: Sendable, Hashable, CustomStringConvertible {
    /// The realm's number: a private realm's, unique within its root context; 0 for the root realm and
    /// for shared ones, which are told apart by their label.
    public let id: UInt64
    /// The realm's name: `root`, the label of a shared realm, or the name given to `makeRealm(name:)`.
    public let name: String
    /// Which kind of realm it is.
    let kind: Kind

    /// The kinds of realm.
    enum Kind: Sendable, Hashable {
        case root, shared, `private`
    }

    private init(id: UInt64, name: String, kind: Kind) {
        self.id = id
        self.name = name
        self.kind = kind
    }

    /// The default realm.
    public static let root = Realm(id: 0, name: "root", kind: .root)

    /// The shared realm named `label`: every context isolated with it sees the same providers.
    public static func label(_ label: String) -> Realm {
        Realm(id: 0, name: label, kind: .shared)
    }

    /// A private realm numbered `id`, named `name`.
    static func `private`(_ id: UInt64, name: String) -> Realm {
        Realm(id: id, name: name, kind: .private)
    }

    /// The shared label, or nil for the root and private realms.
    public var label: String? { kind == .shared ? name : nil }

    /// Whether the realm is private to the context tree that made it (it never leaves its node).
    public var isPrivate: Bool { kind == .private }

    /// `root`, the label, or `name#id` for a private realm.
    public var description: String {
        switch kind {
        case .root, .shared: return name
        case .private: return "\(name)#\(id)"
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

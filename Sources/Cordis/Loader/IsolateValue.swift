import CordisJSON

/// How an entry isolates one service: in a realm private to the entry (`true` in the file) or in the
/// shared realm with a label (`"blue"`), the same label naming the same realm on every node.
public enum IsolateValue: Sendable, Hashable, CustomStringConvertible {
    /// A realm private to this entry, which never leaves its node.
    case `private`
    /// The shared realm with this label.
    case label(String)

    /// `true` or the quoted label, as in the file.
    public var description: String {
        switch self {
        case .private: return "true"
        case .label(let label): return "\"\(label)\""
        }
    }
}

extension IsolateValue {
    /// The value an entries file writes: `true` for a private realm, the label for a shared one.
    public init?(json: JSONValue) {
        switch json {
        case .bool(true): self = .private
        case .string(let label) where !label.isEmpty: self = .label(label)
        default: return nil
        }
    }

    /// The value as an entries file writes it: `true`, or the label.
    public var json: JSONValue {
        switch self {
        case .private: .bool(true)
        case .label(let label): .string(label)
        }
    }
}

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

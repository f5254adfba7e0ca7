import CordisJSON

/// How an entry isolates one service: in a realm private to the entry (`true` in the file) or in the
/// shared realm with a label (`"blue"`), the same label naming the same realm on every node.
public enum IsolateSpec: Sendable, Hashable, CustomStringConvertible {
    /// A realm private to this entry, which never leaves its node.
    case local
    /// The shared realm with this label.
    case shared(String)

    /// `true` or the quoted label, as in the file.
    public var description: String {
        switch self {
        case .local: return "true"
        case .shared(let label): return "\"\(label)\""
        }
    }
}

extension IsolateSpec {
    /// The value an entries file writes: `true` for a private realm, the label for a shared one.
    public init?(json: JSONValue) {
        switch json {
        case .bool(true): self = .local
        case .string(let label) where !label.isEmpty: self = .shared(label)
        default: return nil
        }
    }

    /// The value as an entries file writes it: `true`, or the label.
    public var json: JSONValue {
        switch self {
        case .local: .bool(true)
        case .shared(let label): .string(label)
        }
    }

    /// The earlier name of `.local`.
    @available(*, deprecated, renamed: "local")
    public static var `private`: IsolateSpec { .local }

    /// The earlier name of `.shared(_:)`.
    @available(*, deprecated, renamed: "shared(_:)")
    public static func label(_ label: String) -> IsolateSpec { .shared(label) }
}

/// The earlier name of `IsolateSpec`.
@available(*, deprecated, renamed: "IsolateSpec")
public typealias IsolateValue = IsolateSpec

extension IsolateSpec: Codable {
    /// Decodes `true` (a private realm) or a label string, as the entries file writes them.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for anything else (`false`, a number, an empty label).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let value = IsolateSpec(json: try container.decode(JSONValue.self)) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "an isolate value is true or a non-empty realm label")
        }
        self = value
    }

    /// Encodes `true` for a private realm, the label for a shared one.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

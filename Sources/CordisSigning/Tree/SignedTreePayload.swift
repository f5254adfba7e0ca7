import CordisJSON

/// What a signed tree says: the node it is for, its version, its validity window and the entries.
///
/// On the wire (the exact bytes the signature covers, base64url in the envelope's `payload`):
/// `{"node": "a", "version": 1764586800000, "issuedAt": "2026-12-01T11:00:00Z",
/// "expiresAt": "2026-12-08T11:00:00Z", "entries": [ … ]}`, entries as in an entries file.
public struct SignedTreePayload: Sendable, Hashable {
    /// The node the tree is for.
    public var node: String
    /// A positive integer; a node applies only a version greater than the last it applied.
    public var version: Int64
    /// When it was signed (seconds since 1970).
    public var issuedAt: Double
    /// When it stops being valid (seconds since 1970).
    public var expiresAt: Double
    /// The entries, as in an entries file's `entries` array.
    public var entries: [JSONValue]

    /// A payload.
    public init(node: String, version: Int64, issuedAt: Double, expiresAt: Double, entries: [JSONValue]) {
        self.node = node
        self.version = version
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.entries = entries
    }

    /// Reads a payload's bytes.
    ///
    /// - Throws: `SignedTreeError` `.shape` naming the member at fault.
    public init(parsing bytes: [UInt8]) throws(SignedTreeError) {
        let value: JSONValue
        do {
            value = try JSONParser().parse(bytes)
        } catch {
            throw SignedTreeError(.shape, "the payload is not JSON: \(error)")
        }
        guard case .object(let object) = value else { throw SignedTreeError(.shape, "the payload is not a JSON object") }
        guard case .string(let node)? = object["node"] else { throw SignedTreeError(.shape, "the payload's node must be a string") }
        guard let version = object["version"]?.int64Value, version > 0 else {
            throw SignedTreeError(.shape, "the payload's version must be a positive integer up to \(JSONValue.maxSafeInteger)")
        }
        guard case .string(let issuedText)? = object["issuedAt"], let issuedAt = RFC3339.parse(issuedText) else {
            throw SignedTreeError(.shape, "the payload's issuedAt must be an RFC 3339 UTC time like 2026-12-01T11:00:00Z")
        }
        guard case .string(let expiresText)? = object["expiresAt"], let expiresAt = RFC3339.parse(expiresText) else {
            throw SignedTreeError(.shape, "the payload's expiresAt must be an RFC 3339 UTC time like 2026-12-08T11:00:00Z")
        }
        guard case .array(let entries)? = object["entries"] else {
            throw SignedTreeError(.shape, "the payload's entries must be an array of entries")
        }
        self.init(node: node, version: version, issuedAt: issuedAt, expiresAt: expiresAt, entries: entries)
    }

    /// The payload's bytes, members in the documented order.
    public func serialized() -> [UInt8] {
        let object: JSONObject = [
            "node": .string(node), "version": .integer(version),
            "issuedAt": .string(RFC3339.format(Self.wholeSeconds(issuedAt))),
            "expiresAt": .string(RFC3339.format(Self.wholeSeconds(expiresAt))),
            "entries": .array(entries),
        ]
        return Array(JSONValue.object(object).jsonString(.compact).utf8)
    }

    /// Whole seconds of a time, within years 1970–9999 (anything else is clamped to them).
    static func wholeSeconds(_ seconds: Double) -> Int64 {
        let latest = 253_402_300_799.0  // 9999-12-31T23:59:59Z
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int64(min(seconds, latest).rounded(.down))
    }
}

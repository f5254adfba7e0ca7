/// A wire protocol version, `MAJOR.MINOR`: peers with different majors cannot talk.
///
/// Written on the wire as the string `"1.5"`: decimal, without leading zeros. A minor increase only adds
/// optional members, message types, commands, codes or capabilities, which older peers ignore or answer
/// with an `error` of code `unknown-type` (or a `response` of code `unknown-command`); anything an older
/// peer would misread needs a new major version.
public struct ProtocolVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Incompatible changes increase the major version.
    public var major: Int
    /// Compatible additions increase the minor version.
    public var minor: Int

    /// A version from its two parts.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// The version this library speaks.
    public static let current = ProtocolVersion(major: 1, minor: 5)

    /// Parses `"MAJOR.MINOR"` (digits only, each at most 6 of them, no leading zeros), or nil: a version is
    /// written one way only, since the handshake's transcript covers it as sent.
    public init?(_ text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        var numbers: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 6, part.allSatisfy({ (0x30 ... 0x39).contains($0) }),
                  part.count == 1 || part.first != 0x30
            else { return nil }
            numbers.append(part.reduce(0) { $0 * 10 + Int($1 - 0x30) })
        }
        self.init(major: numbers[0], minor: numbers[1])
    }

    public var description: String { "\(major).\(minor)" }

    /// True when a peer speaking `other` can talk with this version (same major).
    public func isCompatible(with other: ProtocolVersion) -> Bool { major == other.major }

    public static func < (lhs: ProtocolVersion, rhs: ProtocolVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}

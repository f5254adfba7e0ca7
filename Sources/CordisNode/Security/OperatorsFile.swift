import CordisFiles
import CordisJSON
import CordisWire

/// An operators file (`--operators FILE`): a JSON object from identity to role,
/// `{"alice": "viewer", "uid:1000": "operator", "group:cordis-admins": "admin", "cluster": "admin"}`.
///
/// Identities are written `NAME` (an operator certificate's name), `uid:N`, `user:NAME`,
/// `group:NAME` or `cluster`. An operator matched by several entries (its user and a group, say) has
/// the highest of their roles; one matched by none is not admitted.
public struct OperatorsFile: Sendable, Hashable {
    /// The largest file read: 1 MiB.
    public static let maximumBytes = 1 << 20

    /// The role of each identity.
    public var roles: [String: OperatorRole]
    /// The ids its user and group names had when it was read (`load` resolves them).
    public var accounts: AccountNames

    /// A table of roles, with `accounts` as the ids of its names.
    public init(roles: [String: OperatorRole], accounts: AccountNames = AccountNames()) {
        self.roles = roles
        self.accounts = accounts
    }

    /// Parses a file's bytes.
    ///
    /// - Throws: `OperatorsFileError` naming the identity or role at fault.
    public init(parsing bytes: [UInt8]) throws(OperatorsFileError) {
        let document: JSONValue
        do {
            document = try JSONParser().parse(bytes)
        } catch {
            throw OperatorsFileError("not valid JSON: \(error)")
        }
        guard case .object(let object) = document else {
            throw OperatorsFileError(
                "expected a JSON object from identity to role, like {\"uid:1000\": \"operator\"}, not \(document.kindName)")
        }
        var roles: [String: OperatorRole] = [:]
        for (identity, value) in object {
            guard Self.isIdentity(identity) else {
                throw OperatorsFileError(
                    "\"\(identity.prefix(100))\" is not an identity: write NAME, uid:N, user:NAME, group:NAME or cluster")
            }
            guard case .string(let text) = value, let role = OperatorRole(rawValue: text) else {
                throw OperatorsFileError(
                    "the role of \"\(identity)\" must be \"viewer\", \"operator\" or \"admin\", not \(String(value.description.prefix(100)))")
            }
            roles[identity] = role
        }
        self.roles = roles
        self.accounts = AccountNames()
    }

    /// Reads and parses the file at `path`, and resolves its user and group names to ids.
    ///
    /// - Throws: `OperatorsFileError` when it cannot be read or is not a valid operators file.
    public static func load(path: String) throws(OperatorsFileError) -> OperatorsFile {
        let bytes: [UInt8]
        do {
            guard let file = try RegularFile.read(path, maxSize: maximumBytes) else {
                throw OperatorsFileError(path: path, "does not exist")
            }
            bytes = file.bytes
        } catch let error as OperatorsFileError {
            throw error
        } catch {
            throw OperatorsFileError(path: path, "\(error)")
        }
        var file: OperatorsFile
        do {
            file = try OperatorsFile(parsing: bytes)
        } catch {
            throw OperatorsFileError(path: path, error.problem)
        }
        file.accounts = AccountNames(resolving: file.roles.keys)
        return file
    }

    /// The role of an operator known by `identities`: the highest of the roles listed for them, or nil
    /// when none is listed. `uid:N` and `gid:N` also match the `user:` and `group:` names resolved to N.
    public func role(of identities: [String]) -> OperatorRole? {
        var matched = identities.compactMap { roles[$0] }
        for identity in identities {
            if identity.hasPrefix("uid:"), let uid = UInt32(identity.dropFirst(4)) {
                matched += accounts.userNames(of: uid).compactMap { roles["user:\($0)"] }
            } else if identity.hasPrefix("gid:"), let gid = UInt32(identity.dropFirst(4)) {
                matched += accounts.groupNames(of: gid).compactMap { roles["group:\($0)"] }
            }
        }
        return matched.max()
    }

    /// The names that stand for something other than a person: `cluster`, whoever proved the cluster
    /// secret. An operator certificate with such a name gets no identity from it.
    static let reservedNames: Set<String> = ["cluster"]

    /// Whether `text` is an identity an operators file may list.
    static func isIdentity(_ text: String) -> Bool {
        if reservedNames.contains(text) { return true }
        if text.hasPrefix("uid:") { return UInt32(text.dropFirst(4)) != nil }
        for prefix in ["user:", "group:"] where text.hasPrefix(prefix) {
            let rest = text.dropFirst(prefix.count)
            return !rest.isEmpty && rest.utf8.count <= 256 && !rest.contains(where: { $0.isWhitespace || $0 == ":" })
        }
        return PeerName.isValid(text)
    }
}

/// Why an operators file was refused: its path and the problem.
public struct OperatorsFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file, when known.
    public var path: String?
    /// What is wrong with it.
    public var problem: String

    init(path: String? = nil, _ problem: String) {
        self.path = path
        self.problem = problem
    }

    /// `operators file PATH: PROBLEM`.
    public var description: String {
        guard let path else { return "operators file: \(problem)" }
        return "operators file \(path): \(problem)"
    }
}

import CordisNode
import CordisWire
import Testing

/// Unix peers' operator identities are worked out from numbers only: the user and group names an
/// operators file lists are resolved to ids when the file is read, so a handshake (on the event loop)
/// never waits for the user database.
@Suite("Operator identities from resolved accounts")
struct OperatorAccountsTests {
    static let root = PeerCredentials(uid: 0, gid: 0, pid: 1)

    @Test("a Unix peer's identity is built without the user database: uid and gid numbers only")
    func identityNeedsNoLookup() {
        let identity = OperatorIdentity(credentials: Self.root, provedSecret: false)
        #expect(identity.name == "uid:0")
        #expect(identity.identities == ["uid:0", "gid:0"])
    }

    @Test("names the operators file lists are matched by the ids they were resolved to when it was read")
    func resolvedNamesMatchByNumber() throws {
        var file = try OperatorsFile(parsing: Array(#"{"user:root": "operator", "group:root": "viewer"}"#.utf8))
        file.accounts = AccountNames(users: ["root": 0], groups: ["root": 0])
        let table = OperatorTable(file)
        let identity = OperatorIdentity(credentials: Self.root, provedSecret: false, accounts: file.accounts)
        #expect(identity.name == "root")
        #expect(identity.identities.contains("user:root") && identity.identities.contains("group:root"))
        #expect(table.role(of: identity) == .operator)
        // A relayed identity with numbers only is matched by this node's own resolution.
        #expect(table.role(of: OperatorIdentity(name: "uid:0", identities: ["uid:9", "gid:0"])) == .viewer)
        #expect(table.role(of: OperatorIdentity(name: "uid:9", identities: ["uid:9", "gid:9"])) == nil)
    }

    @Test("reading an operators file resolves its user and group names")
    func loadingResolves() {
        let accounts = AccountNames(resolving: ["user:root", "group:root", "user:no-such-user-here", "uid:5", "cluster"])
        #expect(accounts.users == ["root": 0])
        #expect(accounts.groups == ["root": 0])
    }
}

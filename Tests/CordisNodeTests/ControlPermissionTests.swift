@testable import CordisNode
import CordisControl
import CordisWire
import Testing

/// `ControlPermission`: who may run which control request and call, as values.
@Suite("ControlPermission: roles, members' own requests and signed trees")
struct ControlPermissionTests {
    static let alice = OperatorIdentity(name: "alice", identities: ["user:alice"])

    static func refusal(
        _ command: ControlCommand, requester: OperatorIdentity? = alice, role: OperatorRole?, peerRole: PeerRole = .console,
        runsHere: Bool = true, signedTreesOnly: Bool = false
    ) -> ControlPermission.Refusal? {
        ControlPermission.refusal(
            of: command, on: "a", requester: requester, role: role, from: "b", peerRole: peerRole, runsHere: runsHere,
            signedTreesOnly: signedTreesOnly)
    }

    @Test("without an operators file every console links; with one, only a console it lists")
    func consolesAdmitted() {
        #expect(ControlPermission.admitsConsole(role: nil, operatorsFile: false))
        #expect(!ControlPermission.admitsConsole(role: nil, operatorsFile: true))
        #expect(ControlPermission.admitsConsole(role: .viewer, operatorsFile: true))
    }

    @Test("a listed operator runs what its role allows; a change refused is audited, a read refused is not")
    func roles() {
        #expect(Self.refusal(.status, role: .viewer) == nil)
        #expect(Self.refusal(.disable, role: .viewer)
            == ControlPermission.Refusal(message: "disable needs the operator role; you are viewer", audited: true))
        #expect(Self.refusal(.disable, role: .operator) == nil)
        #expect(Self.refusal(.forget, role: .operator)
            == ControlPermission.Refusal(message: "forget needs the admin role; you are operator", audited: true))
        #expect(Self.refusal(.call, role: .viewer)?.audited == false)
        #expect(Self.refusal(.status, role: nil)
            == ControlPermission.Refusal(message: "alice is not listed in the operators file of a", audited: false))
        #expect(Self.refusal(.add, role: nil)?.audited == true)
    }

    @Test("a member's own request only reads: anything more runs only for an operator")
    func membersOwnRequests() {
        #expect(Self.refusal(.status, requester: nil, role: nil, peerRole: .node) == nil)
        #expect(Self.refusal(.subscribe, requester: nil, role: nil, peerRole: .node) == nil)
        #expect(Self.refusal(.enable, requester: nil, role: nil, peerRole: .node) == ControlPermission.Refusal(
            message: "the request of member b carries no operator: a runs enable only for an operator", audited: true))
        // Relayed for an operator, the operator's role decides.
        #expect(Self.refusal(.enable, role: .operator, peerRole: .node) == nil)
    }

    @Test("under --require-signed-trees a change without a signed tree is refused where it runs, and audited; relayed on, the member decides")
    func signedTreesOnly() {
        let refused = Self.refusal(.add, role: .admin, signedTreesOnly: true)
        #expect(refused == ControlPermission.Refusal(
            message: "a accepts only signed trees (--require-signed-trees): add is refused; apply a signed tree instead", audited: true))
        #expect(Self.refusal(.add, role: .admin, runsHere: false, signedTreesOnly: true) == nil)
        #expect(Self.refusal(.apply, role: .admin, signedTreesOnly: true) == nil)
        #expect(Self.refusal(.forget, role: .admin, signedTreesOnly: true) == nil)
    }

    @Test("a console calls a service with the operator role or above")
    func calls() {
        #expect(ControlPermission.callRefusal(on: "a", requester: Self.alice, role: .operator) == nil)
        #expect(ControlPermission.callRefusal(on: "a", requester: Self.alice, role: .viewer) == "call needs the operator role; you are viewer")
        #expect(ControlPermission.callRefusal(on: "a", requester: Self.alice, role: nil) == "alice is not listed in the operators file of a")
        #expect(ControlPermission.callRefusal(on: "a", requester: nil, role: nil) == "this console is not listed in the operators file of a")
    }
}

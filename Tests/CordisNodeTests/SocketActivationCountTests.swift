import CordisNode
import Testing

/// `LISTEN_FDS` is a number from the environment: one larger than the descriptors the process may
/// hold cannot be true, and must not make the node build billions of sockets.
@Suite("Socket activation counts")
struct SocketActivationCountTests {
    @Test("A LISTEN_FDS past the descriptor limit is refused", arguments: ["2147483644", "1000001", "65536"])
    func countPastTheDescriptorLimitIsRefused(count: String) {
        #expect {
            try SocketActivation.sockets(
                environment: ["LISTEN_PID": "100", "LISTEN_FDS": count], processID: 100, descriptorLimit: 65536)
        } throws: { error in
            (error as? SystemdError)?.code == .invalidActivation
        }
    }

    @Test("A LISTEN_FDS that fits under the descriptor limit is taken")
    func countUnderTheLimitIsTaken() throws {
        let sockets = try SocketActivation.sockets(
            environment: ["LISTEN_PID": "100", "LISTEN_FDS": "61"], processID: 100, descriptorLimit: 64)
        #expect(sockets.count == 61)
        #expect(sockets.last?.fd == 63)
    }
}

@testable import CordisNode
import CordisWire
import Testing

/// The rule for TCP listeners, as the flags and a started node (socket-activated listeners too) ask it.
@Suite("Listener security: TCP only with a secret or TLS, or --insecure")
struct ListenerSecurityTests {
    @Test("Unix sockets need nothing; TCP is refused unsecured, naming the first TCP address, and allowed with a secret, TLS or --insecure")
    func rule() throws {
        let unix = try Address(parsing: "unix:/tmp/a.sock")
        let tcp = try Address(parsing: "tcp:127.0.0.1:7000")
        #expect(ListenerSecurity.refusal(listeningOn: [unix], secured: false, insecureAllowed: false) == nil)
        let refusal = ListenerSecurity.refusal(listeningOn: [unix, tcp], secured: false, insecureAllowed: false)
        #expect(refusal?.hasPrefix("refusing to listen on tcp:127.0.0.1:7000 without a secret or TLS;") == true, "\(refusal ?? "nil")")
        #expect(ListenerSecurity.refusal(listeningOn: [tcp], secured: true, insecureAllowed: false) == nil)
        #expect(ListenerSecurity.refusal(listeningOn: [tcp], secured: false, insecureAllowed: true) == nil)
        #expect(ListenerSecurity.refusal(listeningOn: [], secured: false, insecureAllowed: false) == nil)
    }
}

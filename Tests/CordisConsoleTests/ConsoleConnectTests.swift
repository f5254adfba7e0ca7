import CordisWire
import Testing
@testable import CordisConsole

/// How the console words a failure to set up its link to the node.
@Suite("Console connect failures")
struct ConsoleConnectTests {
    @Test("a node that does not answer in time is a timeout, whichever timer fires first", arguments: [
        DeadlineExceeded() as any Error,
        TransportError(.handshakeTimeout, "connection 1: no handshake within 1.0 seconds"),
        TransportError(.connectTimeout, "no connection within 1.0 seconds"),
    ])
    func silentNodeIsTimeout(error: any Error) {
        let failure = ConsoleSession.connectFailure(error, node: "unix:/x.sock", timeout: 1)
        #expect(failure.exitCode == 69)
        #expect(failure.message.hasPrefix("timeout: "))
        #expect(failure.message.contains("unix:/x.sock"))
    }

    @Test("a node nobody listens on is reported as unreachable with the reason")
    func refusedIsUnreachable() {
        let failure = ConsoleSession.connectFailure(
            TransportError(.connectionRefused, "nobody listens on unix:/x.sock"), node: "unix:/x.sock", timeout: 1)
        #expect(failure.exitCode == 69)
        #expect(failure.message.hasPrefix("cannot reach node unix:/x.sock: "))
    }
}

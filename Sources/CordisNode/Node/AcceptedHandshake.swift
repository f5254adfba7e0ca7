import CordisWire
import Synchronization

/// The handshake configuration a node's accepted connections run with, readable from any thread: the
/// accept loops read it off the actor, the node replaces it when its identity changes (nil while it is
/// not running).
final class AcceptedHandshake: Sendable {
    private let current = Mutex<HandshakeConfiguration?>(nil)

    /// The configuration for the next connection accepted; nil while the node is not running.
    var configuration: HandshakeConfiguration? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}

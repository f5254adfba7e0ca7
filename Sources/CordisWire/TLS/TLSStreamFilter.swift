import Synchronization

/// A `TLSEngine` as a connection's `StreamFilter`: the socket's bytes are TLS records, the frame
/// codec above sees plain frames. Frames sent before the TLS handshake is over wait in the filter and
/// go out, encrypted, with the handshake's last flight.
///
/// The first bytes from the peer tell a peer without TLS apart: plain Cordis frames (a length
/// prefix, not a TLS record) fail the link with a line saying that the peer has no TLS configured,
/// and an accepting side answers such a peer with a plain `reject` so that it can say so too.
package final class TLSStreamFilter: StreamFilter {
    private struct State {
        /// Framed bytes sent before the handshake was over, in order.
        var waiting: [UInt8] = []
        /// Whether a byte from the peer was seen.
        var heard = false
        /// What to send before closing once `inbound` threw: a TLS alert, or a plain refusal.
        var lastWords: [UInt8] = []
    }

    /// The session.
    package let engine: TLSEngine
    private let state = Mutex(State())

    /// A filter for one connection on `context`: a `.client` engine for a dialled connection (its first
    /// flight is in `firstFlight()`), a `.server` one for an accepted connection.
    package init(context: TLSContext, side: TLSEngine.Side) throws(TLSError) {
        engine = try TLSEngine(context: context, side: side)
    }

    /// The bytes the client sends first (its ClientHello); empty for a server.
    package func firstFlight() -> [UInt8] { engine.takeOutbound() }

    /// The peer's certificate name once the TLS handshake is over.
    package var peerName: TLSPeerName? { engine.peerName }

    /// What to send before the connection closes after `inbound` threw (possibly nothing).
    package func takeLastWords() -> [UInt8] {
        state.withLock { state in
            defer { state.lastWords = [] }
            return state.lastWords
        }
    }

    package func inbound(_ bytes: UnsafeRawBufferPointer) throws(TransportError) -> (plain: [UInt8], reply: [UInt8]) {
        try state.withLock { (state: inout State) throws(TransportError) -> (plain: [UInt8], reply: [UInt8]) in
            if !state.heard, let first = bytes.first {
                state.heard = true
                // A TLS record starts with its content type, 20…23; a Cordis frame with the high byte of
                // its length, 0 for any frame a peer sends first.
                if !(20...23).contains(first) {
                    if engine.side == .server {
                        state.lastWords = Self.plainRefusal
                        throw TransportError(
                            .tls, "the peer sent plain Cordis frames, not TLS: the peer has no TLS configured, and this "
                                + "node requires TLS on TCP (--tls-cert, --tls-key, --tls-ca)")
                    }
                    throw TransportError(
                        .tls, "the peer answered without TLS: the peer has no TLS configured (it runs with a secret "
                            + "or --insecure), and this side requires TLS on TCP")
                }
            }
            let plain: [UInt8]
            do throws(TLSError) {
                plain = try engine.receive(Array(bytes))
                if !state.waiting.isEmpty, engine.peerName != nil {
                    try engine.send(state.waiting)
                    state.waiting = []
                }
            } catch {
                state.lastWords = engine.takeOutbound()
                throw TransportError(.tls, "TLS: \(error.message)")
            }
            return (plain, engine.takeOutbound())
        }
    }

    package func outbound(_ framed: [UInt8]) throws(TransportError) -> [UInt8] {
        try state.withLock { (state: inout State) throws(TransportError) -> [UInt8] in
            switch engine.phase {
            case .handshaking:
                state.waiting += framed
                return []
            case .failed(let error):
                throw TransportError(.tls, "TLS: \(error.message)")
            case .established, .unnamed:
                do throws(TLSError) {
                    if !state.waiting.isEmpty {
                        try engine.send(state.waiting)
                        state.waiting = []
                    }
                    try engine.send(framed)
                } catch {
                    throw TransportError(.tls, "TLS: \(error.message)")
                }
                return engine.takeOutbound()
            }
        }
    }

    /// A framed `reject` for a peer that dialled without TLS.
    private static let plainRefusal: [UInt8] = {
        let notice = WireMessage.reject(Rejection(
            code: WireError.Code.tlsRequired.spelled(for: nil),
            reason: "this node requires TLS on TCP and the dialling side has no TLS configured "
                + "(give it --tls-cert, --tls-key and --tls-ca)")).encoded
        var framed: [UInt8] = []
        try? FrameEncoder(maxFrameSize: Int.max).append(payload: notice, to: &framed)
        return framed
    }()
}

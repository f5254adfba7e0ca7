/// What a link makes of each frame it receives, as one pure step: the handshake until it completes, then
/// the session's opening of every frame (its sequence number and MAC on an authenticated link) and the
/// message's decoding, the answers a link gives by itself (a `pong`, an `unknown-type` error), and the
/// error that ends the link. A frame's payload in, what to do out: no socket, lock or clock, so each rule is
/// tested with bytes (`LinkCodecTests`). A `Link` holds one under its receiving lock on the loop thread,
/// after the connection's `CodecChain` has cut the bytes into frames.
///
/// The handshake's course is held here once, in `phase`: `handshaking`, then `established`, then
/// `finished` (the handshake failed or was given up, or the link failed after it). The handshake runs only
/// while handshaking and the session codec only while established; `result` keeps what the handshake
/// established.
package struct LinkCodec: Sendable {
    /// Where the link stands.
    package enum Phase: Equatable, Sendable {
        /// The handshake runs.
        case handshaking
        /// The handshake established the link: frames are opened and decoded with the session codec.
        case established
        /// Nothing more is read: the handshake failed or was given up, or a frame after it ended the link.
        case finished
    }

    /// What to do with one frame received.
    package enum Output: Sendable {
        /// Nothing: the link has finished.
        case consume
        /// The handshake goes on: send these messages, unsealed.
        case proceed([WireMessage])
        /// The handshake established the link: send these messages, unsealed; from now on frames are sent
        /// with `codec` (its sending half) and received by this value.
        indirect case established([WireMessage], HandshakeResult, SessionCodec)
        /// The handshake failed: send these messages, unsealed (a `reject`, or none), then close.
        indirect case failed([WireMessage], WireError)
        /// A message decoded from the frame, and what the link does with it.
        case decoded(WireMessage, Reaction)
        /// The link ends with `error`: send `notice` first (sealed; nil when the peer's own error notice
        /// ended it), then close.
        indirect case refuse(WireError, notice: WireMessage?)
    }

    /// What a link does with a message it decoded.
    package enum Reaction: Equatable, Sendable {
        /// Hand it to the link's consumer.
        case deliver
        /// Nothing (a `pong` the link's consumer did not ask for).
        case drop
        /// Send this answer back at once, on the loop thread (a `pong`, an `unknown-type` error). Boxed:
        /// a reaction to deliver stays one word.
        indirect case answer(WireMessage)
    }

    /// Where the link stands.
    package private(set) var phase = Phase.handshaking
    /// What the handshake established (the peer, the version, the keys), once it did; kept after the end.
    package private(set) var result: HandshakeResult?
    /// The handshake, while it runs. (The handshake and the session codec are held apart from `phase` and
    /// changed in place: every frame would otherwise copy them out of the phase and back.)
    private var handshake: Handshake?
    /// The session codec's receiving half, while the link is established.
    private var session: SessionCodec?
    /// The largest frame this side sends once established (the peer's limit bounds it further, when
    /// the peer said one).
    package let maxFrameSize: Int
    /// Whether `pong`s reach the link's consumer (else they are dropped).
    package let deliversPongs: Bool

    /// A codec running `handshake` (started already: its opening messages sent).
    package init(handshake: Handshake, maxFrameSize: Int = Frame.defaultMaxSize, deliversPongs: Bool = false) {
        self.handshake = handshake
        self.maxFrameSize = maxFrameSize
        self.deliversPongs = deliversPongs
    }

    /// Whether the handshake still runs (its outcome not yet decided).
    package var isHandshaking: Bool { phase == .handshaking }

    /// Gives up a handshake still running (its deadline passed, or its connection closed); false when its
    /// outcome was already decided.
    package mutating func abandonHandshake() -> Bool {
        guard isHandshaking else { return false }
        finish()
        return true
    }

    /// Takes one frame's `payload` (the rare outcomes are boxed, so the common one, a message, moves
    /// cheaply); `certificate` names the peer when the link runs over TLS (known once
    /// the TLS handshake, which comes first, verified the peer's certificate).
    package mutating func receive(_ payload: [UInt8], certificate: @autoclosure () -> TLSPeerName? = nil) -> Output {
        let frame = Frame(payload: payload)
        switch phase {
        case .established:
            do throws(WireError) {
                // Decoded in place (the codec's opener counts the frame), never copied out.
                guard let message = try session?.decode(frame), let version = session?.version else { return .consume }
                return .decoded(message, reaction(to: message, version: version))
            } catch {
                let version = session?.version ?? .current
                finish()
                if error.code == .badMAC, case .error(let notice)? = try? WireMessage(frame: frame) {
                    // The peer's transport refused something before closing: its reason is the close's.
                    return .refuse(.rejected("peer closed the link", code: notice.code, reason: notice.message), notice: nil)
                }
                return .refuse(error, notice: .error(RemoteError(
                    id: nil, code: error.code.spelled(for: version), message: BoundedText.clip(error.message))))
            }
        case .handshaking:
            if handshake?.overTLS == true, handshake?.certificate == nil, let name = certificate() { handshake?.certify(name) }
            guard let step = handshake?.receive(frame) else { return .consume }
            switch step {
            case .proceed(let send):
                return .proceed(send)
            case .established(let send, let result):
                // Frames sent are bounded by the smaller of the two limits: the peer's, when it said it.
                let codec = result.sessionCodec(maxFrameSize: min(maxFrameSize, result.peer.maxFrameSize ?? Frame.defaultMaxSize))
                phase = .established
                handshake = nil
                session = codec
                self.result = result
                return .established(send, result, codec)
            case .failed(let send, let error):
                finish()
                return .failed(send, error)
            }
        case .finished:
            return .consume
        }
    }

    /// Nothing more is read: the phase's tools go.
    private mutating func finish() {
        phase = .finished
        handshake = nil
        session = nil
    }

    private func reaction(to message: WireMessage, version: ProtocolVersion) -> Reaction {
        switch message {
        case .ping(let id): return .answer(.pong(id: id))
        case .pong where !deliversPongs: return .drop
        case .unknown(let type, _): return .answer(WireMessage.unknownTypeReply(to: type, version: version))
        default: return .deliver
        }
    }
}

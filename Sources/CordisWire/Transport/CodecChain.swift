/// Everything between a connection's socket bytes and the payloads it queues, as pure steps: the
/// sniffing of a TLS ClientHello on a plain link, the stream filter (TLS on memory buffers), the
/// splitting into frames, and the error frame that answers a framing fault. It does no I/O and keeps
/// no clock: bytes go in, payloads and bytes to write come out, so every step is tested without a
/// socket (`CodecChainTests`).
///
/// A `Connection` holds one chain under its lock and carries out what each step returns: it queues the
/// payloads, writes the replies and, at an end, writes the last words and closes. With `.raw` framing
/// (a byte stream such as the etcd client's HTTP) the chain hands each read on unchanged. Above it, a
/// `Link`'s own steps turn frames into messages and back: `LinkCodec` on the way in, `LinkSeal` on the
/// way out.
package struct CodecChain {
    /// How the bytes above the stream filter are cut into payloads.
    package enum Framing {
        /// Length-prefixed frames (the Cordis wire), split by this decoder.
        case frames(FrameDecoder)
        /// No frames: each read is one payload, as it came.
        case raw
    }

    /// What one read turned into.
    package struct Step: Sendable {
        /// The payloads completed by the read, in order (whole frames, or the raw bytes).
        package var payloads = OneOrMore<[UInt8]>()
        /// Bytes the stream filter must send back to the peer at once (a TLS handshake's answer),
        /// ahead of any later send.
        package var reply: [UInt8] = []
        /// Set when the connection must close after this read (the payloads before the fault still count).
        package var end: End?
    }

    /// Why a read ends the connection, and what to say before closing.
    package enum End: Equatable, Sendable {
        /// The stream itself is wrong (a TLS fault, a TLS peer on a plain link): write `lastWords`
        /// as they are (not through the stream filter), then close with `error`; with no last words,
        /// close at once.
        case stream(TransportError, lastWords: [UInt8])
        /// A frame broke the framing rules: send `notice` (an error frame, through the stream
        /// filter), then close with `error`.
        case framing(TransportError, notice: [UInt8])
    }

    /// The framing in use.
    package private(set) var framing: Framing
    /// The stream filter, if any (install it before the first byte).
    package var streamFilter: (any StreamFilter)?
    /// Whether the first bytes are checked for a TLS ClientHello, which a plain TCP link refuses with a
    /// plain `reject` saying this side has no TLS (rather than "frame too large").
    package let sniffsTLS: Bool
    /// The bytes read from the socket so far.
    package private(set) var bytesReceived = 0
    /// The whole frames (or raw reads) taken so far.
    package private(set) var payloadsReceived = 0
    /// The protocol version agreed with the peer, once the handshake told it: the code of an error frame
    /// is spelled for it (nil: not known, the spelling every version reads).
    package var peerVersion: ProtocolVersion?

    /// A chain with `framing`, an optional stream filter, and the plain-link ClientHello check.
    package init(framing: Framing, streamFilter: (any StreamFilter)? = nil, sniffsTLS: Bool) {
        self.framing = framing
        self.streamFilter = streamFilter
        self.sniffsTLS = sniffsTLS
    }

    /// The largest frame accepted from now on; nil with raw framing.
    package var maxFrameSize: Int? {
        get {
            guard case .frames(let decoder) = framing else { return nil }
            return decoder.maxFrameSize
        }
        set {
            guard let newValue, case .frames(var decoder) = framing else { return }
            decoder.maxFrameSize = newValue
            framing = .frames(decoder)
        }
    }

    /// Takes `bytes` read from the socket of connection `id` (named in errors).
    package mutating func receive(_ bytes: UnsafeRawBufferPointer, connection id: UInt64) -> Step {
        var step = Step()
        let first = bytesReceived == 0
        bytesReceived &+= bytes.count
        if first, sniffsTLS, streamFilter == nil, bytes.count >= 3, bytes[0] == 0x16, bytes[1] == 0x03 {
            step.end = .stream(
                TransportError(
                    .tls, "connection \(id): the peer speaks TLS, and this node has no TLS configured "
                        + "(--tls-cert, --tls-key, --tls-ca); it runs with a secret or --insecure"),
                lastWords: Self.noTLSRefusal)
            return step
        }
        guard let filter = streamFilter else {
            take(bytes, into: &step, connection: id)
            return step
        }
        do throws(TransportError) {
            let (plain, reply) = try filter.inbound(bytes)
            step.reply = reply
            plain.withUnsafeBytes { take($0, into: &step, connection: id) }
        } catch {
            step.end = .stream(error, lastWords: filter.takeLastWords())
        }
        return step
    }

    /// The stream ended: a frame cut short is the close reason.
    package mutating func finish(connection id: UInt64) -> TransportError? {
        guard case .frames(var decoder) = framing else { return nil }
        defer { framing = .frames(decoder) }
        do throws(WireError) {
            try decoder.finish()
            return nil
        } catch {
            return TransportError(.connectionReset, "connection \(id): \(error.message)")
        }
    }

    /// Framed bytes to send, as the socket must carry them (through the stream filter).
    package func outbound(_ framed: [UInt8]) throws(TransportError) -> [UInt8] {
        guard let streamFilter else { return framed }
        return try streamFilter.outbound(framed)
    }

    /// Drops what a closed connection no longer needs: the filter and the partial frame.
    package mutating func release() {
        streamFilter = nil
        if case .frames(let decoder) = framing { framing = .frames(FrameDecoder(maxFrameSize: decoder.maxFrameSize)) }
    }

    private mutating func take(_ bytes: UnsafeRawBufferPointer, into step: inout Step, connection id: UInt64) {
        guard case .frames(var decoder) = framing else {
            if !bytes.isEmpty {
                step.payloads.append(Array(bytes))
                payloadsReceived += 1
            }
            return
        }
        // The decoder is taken out of the enum while it works, so that feeding it does not copy its buffer.
        framing = .raw
        defer { framing = .frames(decoder) }
        decoder.feed(bytes)
        do throws(WireError) {
            while let frame = try decoder.next() {
                step.payloads.append(frame.payload)
                payloadsReceived += 1
            }
        } catch {
            step.end = .framing(
                TransportError(error.code == .oversize ? .frameTooLarge : .protocolViolation, "connection \(id): \(error.message)"),
                notice: Self.framed(WireMessage.error(
                    RemoteError(
                        id: nil, code: error.code.spelled(for: peerVersion),
                        message: BoundedText.clip(error.message))).encoded))
        }
    }

    /// A framed `reject` for a peer that opened with TLS on a plain link: in plain bytes, so its TLS
    /// layer can tell that this side has no TLS.
    package static let noTLSRefusal: [UInt8] = framed(WireMessage.reject(Rejection(
        code: WireError.Code.tlsNotConfigured.spelled(for: nil), reason: "this node has no TLS configured; it runs with a secret or --insecure")).encoded)

    private static func framed(_ payload: [UInt8]) -> [UInt8] {
        var framed: [UInt8] = []
        try? FrameEncoder(maxFrameSize: Int.max).append(payload: payload, to: &framed)
        return framed
    }
}

import COpenSSL
import Synchronization

/// One TLS 1.3 session over memory BIOs: bytes from the socket go in with `receive`, the bytes to
/// write come out of `takeOutbound`, application data goes in with `send` and comes out of `receive`.
/// It never blocks and owns no socket, so a link can run it on its event loop (no thread per link).
///
/// Both sides present certificates, verified against the context's CA file; once the handshake is
/// over the peer's Cordis name (SAN `URI:cordis://node/NAME` or `URI:cordis://operator/NAME`) is
/// `peerName`, checked against `expecting` when given. After a failure the engine stays failed:
/// every call throws the same error, nothing more is decrypted. Thread-safe (state under a `Mutex`).
package final class TLSEngine: Sendable {
    /// Which end of the handshake this side is.
    package enum Side: Sendable, Hashable {
        /// The side that dialled.
        case client
        /// The side that accepted.
        case server
    }

    /// Where the session stands.
    package enum Phase: Sendable, Hashable {
        /// The handshake is running; feed the peer's bytes and send `takeOutbound()`.
        case handshaking
        /// The handshake is over; the peer is authenticated and named.
        case established(TLSPeerName)
        /// The handshake is over with a peer that showed no certificate and was asked for none (a
        /// context made for an HTTPS server, whose browsers are authenticated otherwise).
        case unnamed
        /// The session failed or was closed; it stays so.
        case failed(TLSError)
    }

    private struct Session: ~Copyable {
        let ssl: OpaquePointer
        /// Bytes from the peer, which libssl reads (owned by `ssl`).
        let inbound: OpaquePointer
        /// Bytes for the peer, which libssl writes (owned by `ssl`).
        let outbound: OpaquePointer
        var phase: Phase = .handshaking

        deinit { SSL_free(ssl) }
    }

    /// The most bytes `receive` takes in one call: 1 MiB (more throws, the session fails).
    package static let maximumInput = 1 << 20

    private let context: TLSContext
    private let expected: TLSPeerName?
    /// The side this engine plays.
    package let side: Side
    private let session: Mutex<Session>

    /// A session on `context`. A client starts the handshake at once: send `takeOutbound()`.
    ///
    /// - Parameter expecting: the name the peer's certificate must hold (the node dialled); nil to
    ///   accept any Cordis name, which the caller then checks against the peer's handshake.
    /// - Throws: `TLSError` `.configuration` when libssl cannot create the session.
    package init(context: TLSContext, side: Side, expecting: TLSPeerName? = nil) throws(TLSError) {
        ERR_clear_error()
        guard let ssl = context.makeSSL() else {
            throw TLSError(.configuration, "libssl cannot create a session: \(TLSError.drainQueue())")
        }
        guard let inbound = BIO_new(BIO_s_mem()), let outbound = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError(.configuration, "libssl cannot create memory buffers")
        }
        // An empty inbound buffer means "wait for more", not end of file.
        _ = BIO_ctrl(inbound, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        _ = BIO_ctrl(outbound, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, inbound, outbound)
        if side == .client { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
        self.context = context
        self.expected = expecting
        self.side = side
        self.session = Mutex(Session(ssl: ssl, inbound: inbound, outbound: outbound))
        if side == .client {
            let verifies = context.verifiesPeers
            session.withLock { Self.advance(&$0, expected: expecting, verifiesPeer: verifies) }
        }
    }

    /// Where the session stands.
    package var phase: Phase { session.withLock { $0.phase } }

    /// The peer's name once the handshake is over.
    package var peerName: TLSPeerName? {
        if case .established(let name) = phase { return name }
        return nil
    }

    /// Takes bytes the peer sent: drives the handshake, and returns the application data they
    /// complete (empty while the handshake runs or a record is incomplete). Send `takeOutbound()`
    /// afterwards: the handshake and alerts write too.
    ///
    /// - Throws: `TLSError` when the bytes are not TLS, the handshake is refused, or the peer closed
    ///   the session (`.closed`); the engine is failed from then on.
    package func receive(_ bytes: [UInt8]) throws(TLSError) -> [UInt8] {
        try session.withLock { (session: inout Session) throws(TLSError) -> [UInt8] in
            if case .failed(let error) = session.phase { throw error }
            guard bytes.count <= Self.maximumInput else {
                let error = TLSError(.handshake, "\(bytes.count) bytes at once; at most \(Self.maximumInput)")
                session.phase = .failed(error)
                throw error
            }
            if !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { BIO_write(session.inbound, $0.baseAddress, Int32($0.count)) }
                guard written == Int32(bytes.count) else {
                    let error = TLSError(.handshake, "libssl refused \(bytes.count) bytes")
                    session.phase = .failed(error)
                    throw error
                }
            }
            if case .handshaking = session.phase { Self.advance(&session, expected: expected, verifiesPeer: context.verifiesPeers) }
            switch session.phase {
            case .failed(let error): throw error
            case .handshaking: return []
            case .established, .unnamed: return try Self.readApplicationData(&session)
            }
        }
    }

    /// Encrypts application data; send `takeOutbound()` afterwards.
    ///
    /// - Throws: `TLSError` before the handshake is over (`.handshake`) or once the session failed.
    package func send(_ plaintext: [UInt8]) throws(TLSError) {
        try session.withLock { (session: inout Session) throws(TLSError) in
            switch session.phase {
            case .failed(let error): throw error
            case .handshaking: throw TLSError(.handshake, "the TLS handshake is not over; nothing can be sent yet")
            case .established, .unnamed: break
            }
            guard !plaintext.isEmpty else { return }
            ERR_clear_error()
            let written = plaintext.withUnsafeBytes { SSL_write(session.ssl, $0.baseAddress, Int32($0.count)) }
            guard written == Int32(plaintext.count) else {
                let error = TLSError(.handshake, "libssl cannot encrypt: \(TLSError.drainQueue())")
                session.phase = .failed(error)
                throw error
            }
        }
    }

    /// The bytes to write to the peer (handshake records, encrypted data, alerts), emptied.
    package func takeOutbound() -> [UInt8] {
        session.withLock { session in
            var out: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while BIO_ctrl_pending(session.outbound) > 0 {
                let count = chunk.withUnsafeMutableBytes { BIO_read(session.outbound, $0.baseAddress, Int32($0.count)) }
                guard count > 0 else { break }
                out += chunk[0..<Int(count)]
            }
            return out
        }
    }

    /// Ends the session in order: a `close_notify` goes into `takeOutbound()`; the engine is failed
    /// (`.closed`) from then on.
    package func close() {
        session.withLock { session in
            switch session.phase {
            case .established, .unnamed: _ = SSL_shutdown(session.ssl)
            case .handshaking, .failed: break
            }
            ERR_clear_error()
            if case .failed = session.phase { return }
            session.phase = .failed(TLSError(.closed, "the TLS session was closed"))
        }
    }

    // MARK: - Under the lock

    private static func advance(_ session: inout Session, expected: TLSPeerName?, verifiesPeer: Bool) {
        ERR_clear_error()
        let result = SSL_do_handshake(session.ssl)
        if result == 1 {
            session.phase = verifiesPeer ? established(session, expected: expected) : .unnamed
            return
        }
        let reason = SSL_get_error(session.ssl, result)
        if reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE { return }
        session.phase = .failed(failure(session, during: "handshake"))
    }

    /// The phase once libssl completed the handshake: the peer's name, or why it is refused.
    private static func established(_ session: borrowing Session, expected: TLSPeerName?) -> Phase {
        guard let certificate = SSL_get1_peer_certificate(session.ssl) else {
            return .failed(TLSError(.noCertificate, "the peer presented no certificate"))
        }
        defer { X509_free(certificate) }
        let verdict = SSL_get_verify_result(session.ssl)
        guard verdict == Int(X509_V_OK) else {
            return .failed(TLSError(.certificate, "the peer's certificate did not verify: \(verifyReason(verdict))"))
        }
        let names = cordisNames(of: certificate)
        if let expected {
            guard names.contains(expected) else {
                let held = names.isEmpty ? "no Cordis name" : names.map(\.description).joined(separator: ", ")
                return .failed(TLSError(.wrongName, "the peer's certificate names \(held), not \(expected)"))
            }
            return .established(expected)
        }
        guard names.count == 1, let name = names.first else {
            let held = names.isEmpty ? "no Cordis name" : "several Cordis names"
            return .failed(TLSError(.wrongName, "the peer's certificate holds \(held) (one SAN URI cordis://node/NAME or cordis://operator/NAME is needed)"))
        }
        return .established(name)
    }

    private static func readApplicationData(_ session: inout Session) throws(TLSError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            ERR_clear_error()
            let count = chunk.withUnsafeMutableBytes { SSL_read(session.ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                out += chunk[0..<Int(count)]
                continue
            }
            let reason = SSL_get_error(session.ssl, count)
            if reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE { return out }
            let error = reason == SSL_ERROR_ZERO_RETURN
                ? TLSError(.closed, "the peer closed the TLS session")
                : failure(session, during: "session")
            session.phase = .failed(error)
            throw error
        }
    }

    /// Why libssl failed, classified.
    private static func failure(_ session: borrowing Session, during what: String) -> TLSError {
        let queued = TLSError.drainQueue()
        let verdict = SSL_get_verify_result(session.ssl)
        if verdict != Int(X509_V_OK) {
            return TLSError(.certificate, "TLS \(what) refused: the peer's certificate did not verify: \(verifyReason(verdict))")
        }
        if queued.contains("peer did not return a certificate") {
            return TLSError(.noCertificate, "TLS \(what) refused: the peer presented no certificate")
        }
        return TLSError(.handshake, "TLS \(what) failed: \(queued.isEmpty ? "the peer's bytes are not TLS 1.3" : queued)")
    }

    private static func verifyReason(_ verdict: Int) -> String {
        guard let text = X509_verify_cert_error_string(verdict) else { return "error \(verdict)" }
        return String(cString: text)
    }

    /// The Cordis names in a certificate's SAN URIs.
    static func cordisNames(of certificate: OpaquePointer) -> [TLSPeerName] {
        guard let raw = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(names) }
        var found: [TLSPeerName] = []
        let count = OPENSSL_sk_num(names)
        guard count > 0 else { return [] }
        for index in 0..<min(count, 64) {
            guard let item = OPENSSL_sk_value(names, index) else { continue }
            let general = item.assumingMemoryBound(to: GENERAL_NAME.self)
            guard general.pointee.type == GEN_URI, let uri = general.pointee.d.uniformResourceIdentifier else { continue }
            let length = Int(ASN1_STRING_length(uri))
            guard length > 0, length <= 256, let data = ASN1_STRING_get0_data(uri) else { continue }
            let text = String(decoding: UnsafeBufferPointer(start: data, count: length), as: UTF8.self)
            if let name = TLSPeerName(uri: text) { found.append(name) }
        }
        return found
    }
}

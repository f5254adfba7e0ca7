import COpenSSL
import Synchronization

/// A libssl context for Cordis links: TLS 1.3 only, this side's certificate and key, and mutual
/// verification against the CA file (a peer without a certificate is refused). Make one per process
/// (or per configuration) and a `TLSEngine` per link from it.
public final class TLSContext: @unchecked Sendable, Hashable {
    /// One libssl context, freed when the last holder lets go (each link's SSL object keeps its own
    /// reference to the context it was made from, so a reload never pulls it from under a link).
    private final class Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { SSL_CTX_free(pointer) }
    }

    // The SSL_CTX in use: set up completely before it is put here and only read afterwards (SSL_new),
    // which libssl allows from any thread; `reload()` replaces it with another, under the lock.
    private let current: Mutex<Handle>
    /// The configuration it was made from (its files are read again by `reload()`).
    public let configuration: TLSConfiguration
    /// Whether its sessions require and verify the peer's certificate (every Cordis link), or take a
    /// peer without one (an HTTPS server's browsers: `init(serverCertificateFile:keyFile:)`).
    package let verifiesPeers: Bool

    /// Reads the certificate, key and CA files.
    ///
    /// - Throws: `TLSError` `.configuration` naming the file libssl refused, and why.
    public init(_ configuration: TLSConfiguration) throws(TLSError) {
        current = Mutex(Handle(try Self.make(configuration)))
        self.configuration = configuration
        verifiesPeers = true
    }

    /// A server context for HTTPS: TLS 1.3, the certificate (chain) and key, and no certificate asked of
    /// the clients (browsers, which the server authenticates otherwise).
    ///
    /// - Throws: `TLSError` `.configuration` naming the file libssl refused, and why.
    package init(serverCertificateFile certificate: String, keyFile key: String) throws(TLSError) {
        let context = try Self.context(certificate: certificate, key: key) { _, _ throws(TLSError) in }
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        _ = SSL_CTX_set_num_tickets(context, 0)
        current = Mutex(Handle(context))
        configuration = TLSConfiguration(certificateFile: certificate, keyFile: key, caFile: "")
        verifiesPeers = false
    }

    /// Reads the files of `configuration` again (a renewed certificate or key, another CA bundle) and
    /// makes them the ones new links use once `accept` (given the Cordis names of the new certificate)
    /// returns; links already up keep the session they have. A CA file that does not verify the new
    /// certificate is refused: the peers, holding certificates of the same CA, would be refused too, and
    /// every new link would fail. On any error nothing changes.
    ///
    /// - Throws: `TLSError` `.configuration` from libssl, for a CA file that does not verify the
    ///   certificate, or what `accept` throws.
    public func reload(accepting accept: ([TLSPeerName]) throws(TLSError) -> Void) throws(TLSError) {
        let fresh = Handle(try Self.make(configuration))
        if let refusal = Self.ownCertificateRefusal(fresh.pointer) {
            throw TLSError(
                .configuration,
                "the CA file \(configuration.caFile) does not verify this node's own certificate "
                    + "\(configuration.certificateFile) (\(refusal)): its peers, holding certificates of the same CA, "
                    + "would be refused too; put the CA that signed it in the file")
        }
        try accept(Self.names(of: fresh.pointer))
        current.withLock { $0 = fresh }
    }

    /// A new SSL object of the context in use (each engine's), nil when libssl cannot make one.
    func makeSSL() -> OpaquePointer? {
        current.withLock { SSL_new($0.pointer) }
    }

    /// A TLS 1.3 context holding the certificate (chain) in `certificate` and the matching private key in
    /// `key`; `more` adds what else the context needs (it throws what the `fail` it is given makes, which
    /// frees the context and names libssl's reason).
    private static func context(
        certificate: String, key: String,
        _ more: (_ context: OpaquePointer, _ fail: (String) -> TLSError) throws(TLSError) -> Void
    ) throws(TLSError) -> OpaquePointer {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_method()) else {
            throw TLSError(.configuration, "libssl cannot create a context: \(TLSError.drainQueue())")
        }
        func fail(_ message: String) -> TLSError {
            SSL_CTX_free(context)
            return TLSError(.configuration, "\(message): \(TLSError.drainQueue())")
        }
        guard SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_3_VERSION), nil) == 1 else {
            throw fail("libssl cannot require TLS 1.3")
        }
        guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
            throw fail("cannot use the certificate \(certificate)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            throw fail("cannot use the key \(key): it is not a PEM private key, or it does not match the certificate \(certificate)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw fail("the key \(key) does not match the certificate \(certificate)")
        }
        try more(context, fail)
        return context
    }

    private static func make(_ configuration: TLSConfiguration) throws(TLSError) -> OpaquePointer {
        let context = try context(certificate: configuration.certificateFile, key: configuration.keyFile) { context, fail throws(TLSError) in
            guard SSL_CTX_load_verify_locations(context, configuration.caFile, nil) == 1 else {
                throw fail("cannot use the CA file \(configuration.caFile)")
            }
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        // No session tickets: every link runs a full handshake with both certificates.
        _ = SSL_CTX_set_num_tickets(context, 0)
        if let time = configuration.verificationTime, let parameters = SSL_CTX_get0_param(context) {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time))
        }
        return context
    }

    /// Why the CA store of `context` does not verify its own certificate (with the chain it sends), or nil
    /// when it does. Validity dates are not checked here: an expiring certificate is the peers' to refuse.
    private static func ownCertificateRefusal(_ context: OpaquePointer) -> String? {
        guard let own = SSL_CTX_get0_certificate(context), let store = SSL_CTX_get_cert_store(context),
              let verification = X509_STORE_CTX_new()
        else { return "libssl cannot check it" }
        defer { X509_STORE_CTX_free(verification) }
        var chain: OpaquePointer?
        _ = SSL_CTX_ctrl(context, SSL_CTRL_GET_CHAIN_CERTS, 0, &chain)
        guard X509_STORE_CTX_init(verification, store, own, chain) == 1 else { return "libssl cannot check it" }
        X509_STORE_CTX_set_flags(verification, UInt(X509_V_FLAG_NO_CHECK_TIME))
        guard X509_verify_cert(verification) != 1 else { return nil }
        return String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(verification))))
    }

    /// A client context with no certificate of its own, trusting `caFile` (tests: a peer that shows
    /// no certificate).
    package init(withoutCertificateTrusting caFile: String) throws(TLSError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_method()) else {
            throw TLSError(.configuration, "libssl cannot create a context: \(TLSError.drainQueue())")
        }
        _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_3_VERSION), nil)
        _ = SSL_CTX_load_verify_locations(context, caFile, nil)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        self.current = Mutex(Handle(context))
        self.configuration = TLSConfiguration(certificateFile: "", keyFile: "", caFile: caFile)
        verifiesPeers = true
    }

    /// The Cordis names this side's own certificate holds (its SAN URIs), empty without a certificate.
    public var ownNames: [TLSPeerName] {
        current.withLock { Self.names(of: $0.pointer) }
    }

    private static func names(of context: OpaquePointer) -> [TLSPeerName] {
        guard let certificate = SSL_CTX_get0_certificate(context) else { return [] }
        return TLSEngine.cordisNames(of: certificate)
    }

    /// Contexts are equal when they are the same object.
    public static func == (left: TLSContext, right: TLSContext) -> Bool { left === right }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

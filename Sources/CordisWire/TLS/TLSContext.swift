import COpenSSL

/// A libssl context for Cordis links: TLS 1.3 only, this side's certificate and key, and mutual
/// verification against the CA file (a peer without a certificate is refused). Make one per process
/// (or per configuration) and a `TLSEngine` per link from it.
public final class TLSContext: @unchecked Sendable, Hashable {
    // Safe to share: the SSL_CTX is set up completely in init and only read afterwards (SSL_new),
    // which libssl allows from any thread; it is freed once, in deinit.
    let context: OpaquePointer
    /// The configuration it was made from.
    public let configuration: TLSConfiguration

    /// Reads the certificate, key and CA files.
    ///
    /// - Throws: `TLSError` `.configuration` naming the file libssl refused, and why.
    public init(_ configuration: TLSConfiguration) throws(TLSError) {
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
        guard SSL_CTX_use_certificate_chain_file(context, configuration.certificateFile) == 1 else {
            throw fail("cannot use the certificate \(configuration.certificateFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, configuration.keyFile, SSL_FILETYPE_PEM) == 1 else {
            throw fail(
                "cannot use the key \(configuration.keyFile): it is not a PEM private key, or it does not match the "
                    + "certificate \(configuration.certificateFile)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw fail("the key \(configuration.keyFile) does not match the certificate \(configuration.certificateFile)")
        }
        guard SSL_CTX_load_verify_locations(context, configuration.caFile, nil) == 1 else {
            throw fail("cannot use the CA file \(configuration.caFile)")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        // No session tickets: every link runs a full handshake with both certificates.
        _ = SSL_CTX_set_num_tickets(context, 0)
        if let time = configuration.verificationTime, let parameters = SSL_CTX_get0_param(context) {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time))
        }
        self.context = context
        self.configuration = configuration
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
        self.context = context
        self.configuration = TLSConfiguration(certificateFile: "", keyFile: "", caFile: caFile)
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// The Cordis names this side's own certificate holds (its SAN URIs), empty without a certificate.
    public var ownNames: [TLSPeerName] {
        guard let certificate = SSL_CTX_get0_certificate(context) else { return [] }
        return TLSEngine.cordisNames(of: certificate)
    }

    /// Contexts are equal when they are the same object.
    public static func == (left: TLSContext, right: TLSContext) -> Bool { left === right }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

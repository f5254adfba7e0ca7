import CordisWire

/// The TLS settings of a node (`--tls-cert`, `--tls-key`, `--tls-ca`), read and checked at start.
public enum NodeTLS {
    /// The context `options` give, nil without TLS flags.
    ///
    /// - Throws: `TLSError` `.configuration` when a file cannot be read or used, or when the
    ///   certificate does not name this node (`URI:cordis://node/NAME`).
    public static func context(_ options: NodeOptions) throws(TLSError) -> TLSContext? {
        guard let certificate = options.tlsCertificateFile, let key = options.tlsKeyFile, let ca = options.tlsCAFile else {
            return nil
        }
        let context = try TLSFiles.load(TLSConfiguration(certificateFile: certificate, keyFile: key, caFile: ca))
        let own = TLSPeerName(.node, options.name)
        let names = context.ownNames
        guard names.contains(own) else {
            let held = names.isEmpty ? "no Cordis name" : names.map(\.description).joined(separator: ", ")
            throw TLSError(
                .configuration,
                "--tls-cert \(certificate) names \(held), not this node (\(own)); make one with "
                    + "deploy/make-certs.sh DIR node \(options.name)")
        }
        return context
    }
}

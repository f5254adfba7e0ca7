import CordisWire

/// The TLS settings of a node (`--tls-cert`, `--tls-key`, `--tls-ca`), read and checked at start and
/// read again on SIGHUP.
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
        try check(context.ownNames, of: certificate, for: options.name)
        return context
    }

    /// Reads the three files of `context` again (SIGHUP) for node `name`: new links use them, links
    /// already up keep theirs.
    ///
    /// - Throws: `TLSError` `.configuration` as at start; the files in use then stay in use.
    public static func reload(_ context: TLSContext, for name: String) throws(TLSError) {
        try TLSFiles.reload(context) { names throws(TLSError) in
            try check(names, of: context.configuration.certificateFile, for: name)
        }
    }

    private static func check(_ names: [TLSPeerName], of certificate: String, for name: String) throws(TLSError) {
        let own = TLSPeerName(.node, name)
        guard names.contains(own) else {
            let held = names.isEmpty ? "no Cordis name" : names.map(\.description).joined(separator: ", ")
            throw TLSError(
                .configuration,
                "--tls-cert \(certificate) names \(held), not this node (\(own)); make one with "
                    + "deploy/make-certs.sh DIR node \(name)")
        }
    }
}

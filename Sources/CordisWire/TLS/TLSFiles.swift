import CordisFiles

#if canImport(Glibc)
import Glibc
#endif

/// Reads and checks the three TLS files of a node or a console before anything starts, with errors
/// that name the file and the fix: each must be a readable regular file, the key open to nobody but
/// its owner (like a secret file), and libssl must accept them together.
public enum TLSFiles {
    /// The largest TLS file read (1 MiB): a few PEM certificates, or a key.
    public static let maximumFileSize = 1 << 20

    /// The context for `configuration` once its files are checked.
    ///
    /// - Throws: `TLSError` `.configuration` naming the flag's file and why it cannot be used.
    public static func load(_ configuration: TLSConfiguration) throws(TLSError) -> TLSContext {
        try check(configuration)
        return try TLSContext(configuration)
    }

    /// Reads `context`'s files again after the same checks (see `TLSContext.reload(accepting:)`).
    ///
    /// - Throws: `TLSError` `.configuration` naming the file and why; nothing changes then.
    public static func reload(
        _ context: TLSContext, accepting accept: ([TLSPeerName]) throws(TLSError) -> Void
    ) throws(TLSError) {
        try check(context.configuration)
        try context.reload(accepting: accept)
    }

    private static func check(_ configuration: TLSConfiguration) throws(TLSError) {
        for (flag, path) in [("--tls-cert", configuration.certificateFile), ("--tls-key", configuration.keyFile),
                             ("--tls-ca", configuration.caFile)] {
            let file: RegularFile?
            do {
                file = try RegularFile.read(path, maxSize: maximumFileSize)
            } catch {
                throw TLSError(.configuration, "cannot read \(flag) \(path): \(error.reason)")
            }
            guard let file else {
                throw TLSError(.configuration, "cannot read \(flag) \(path): \(String(cString: strerror(ENOENT)))")
            }
            if flag == "--tls-key", file.mode & 0o077 != 0 {
                let mode = String(file.mode & 0o777, radix: 8)
                throw TLSError(
                    .configuration,
                    "\(flag) \(path) is open to group or others (mode \(mode)): a private key must be neither "
                        + "readable nor writable by them; run `chmod 600 \(path)`")
            }
            guard file.bytes.count > 0, String(decoding: file.bytes, as: UTF8.self).contains("-----BEGIN ") else {
                throw TLSError(.configuration, "\(flag) \(path) holds no PEM block (-----BEGIN …-----)")
            }
        }
    }
}

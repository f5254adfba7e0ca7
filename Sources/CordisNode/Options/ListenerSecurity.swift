import CordisWire

/// The rule for TCP listeners: a node listens on TCP only with a cluster secret or TLS, unless
/// `--insecure` allows it. Asked of the flags before anything starts, and of the listeners the node
/// holds once up (those systemd passed it included).
enum ListenerSecurity {
    /// Why listening on `addresses` is refused (the first TCP one named), nil when it is allowed: always
    /// on Unix sockets, on TCP when `secured` (a secret or TLS) or `insecureAllowed`.
    static func refusal(listeningOn addresses: [Address], secured: Bool, insecureAllowed: Bool) -> String? {
        guard !secured, !insecureAllowed, let tcp = addresses.first(where: { !$0.isUnix }) else { return nil }
        return "refusing to listen on \(tcp) without a secret or TLS; pass --tls-cert, --tls-key and --tls-ca, "
            + "or --secret-file, or --insecure to allow it"
    }
}

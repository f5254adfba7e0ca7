/// The text `cordis-node --help` prints: the synopsis and every flag with its default.
public enum NodeUsage {
    /// The usage text for a program called `programName`, ending with a newline.
    public static func text(programName: String = "cordis-node") -> String {
        let groups: [(title: String, flags: [NodeFlag])] = [
            ("Required", [.name, .entries]),
            ("Links", [.listen, .advertise, .peer]),
            ("Security", [.secretFile, .tlsCert, .tlsKey, .tlsCA, .insecure, .socketGroup, .allowUID]),
            ("Operators and signed trees", [.operators, .trustedKeys, .requireSignedTrees]),
            ("Timing", [.heartbeatInterval, .heartbeatTimeout, .callTimeout, .withdrawTimeout, .shutdownTimeout]),
            ("Discovery", [.discovery, .leaseTTL, .idleLinkTimeout]),
            ("Observability", [.logLevel, .logFormat, .metricsListen]),
            ("Other", [.maxFrame, .consoleLinks, .consoleRequests, .consoleFollows, .config, .version, .help]),
        ]
        let width = NodeFlag.allCases.map(\.synopsis.count).max() ?? 0
        var lines = [
            "Usage: \(programName) --name NAME --entries FILE [--listen ADDR]... [--advertise ADDR]... [--peer ADDR]...",
            "         [--secret-file FILE]... [--insecure] [--socket-group GROUP] [--allow-uid UID]...",
            "         [--heartbeat-interval S] [--heartbeat-timeout S] [--call-timeout S] [--withdraw-timeout S]",
            "         [--shutdown-timeout S] [--max-frame BYTES] [--log-level error|warn|info|debug]",
            "         [--config FILE] [--version] [--help]",
            "         [--tls-cert FILE --tls-key FILE --tls-ca FILE]",
            "         [--operators FILE] [--trusted-keys FILE] [--require-signed-trees]",
            "         [--discovery etcd:URL[,URL...]] [--lease-ttl S] [--idle-link-timeout S]",
            "         [--metrics-listen tcp:HOST:PORT] [--log-format text|json]",
            "",
            "Runs one Cordis node: its plugin tree from the entries file, linked to its peers.",
            "Flags take --flag VALUE or --flag=VALUE; durations are seconds (decimals allowed);",
            "ADDR is unix:/path, tcp:HOST:PORT or tcp:[IPv6]:PORT.",
        ]
        for group in groups {
            lines.append("")
            lines.append("\(group.title):")
            for flag in group.flags {
                let padding = String(repeating: " ", count: width - flag.synopsis.count + 2)
                var line = "  \(flag.synopsis)\(padding)\(flag.summary)"
                if let defaultText = flag.defaultText { line += " (default: \(defaultText))" }
                lines.append(line)
            }
        }
        lines.append("")
        lines.append("Exit codes: 0 clean stop, 1 runtime failure, 64 bad usage, 66 unreadable entries file, 69 address in use.")
        return lines.joined(separator: "\n") + "\n"
    }
}

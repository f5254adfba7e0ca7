import CordisWire

extension Connection {
    /// Where the connection comes from, for logs: `connection 7 from tcp:127.0.0.1:51234` or
    /// `connection 7 (uid=1000 gid=1000 pid=42)` for a Unix socket peer.
    ///
    /// (`Connection` itself has no description, so interpolating it logged only its type name.)
    var origin: String {
        var text = "connection \(id)"
        if let remoteAddress, case .tcp = remoteAddress { text += " from \(remoteAddress)" }
        if let credentials { text += " (\(credentials))" }
        return text
    }
}

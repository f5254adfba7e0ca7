/// How a node writes its log lines on standard error (`--log-format`). Under journald (stderr
/// connected to it) the node sends structured entries whatever the format.
public enum LogFormat: String, Sendable, Hashable, CaseIterable {
    /// `[level] logger: message KEY=value…`, one line each (`NodeStderrLogExporter`).
    case text
    /// One JSON object per line (`JSONLogLine`).
    case json
}

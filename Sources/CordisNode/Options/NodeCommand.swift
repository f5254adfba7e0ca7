/// What a `cordis-node` command line asks for: run a node, or print the usage or the version.
///
/// `--help` and `--version` are answers, not errors: the caller prints the text to stdout and exits 0.
public enum NodeCommand: Sendable, Hashable {
    /// Run a node with these validated options.
    case run(NodeOptions)
    /// Print this usage text (`--help`).
    case help(String)
    /// Print this version line (`--version`).
    case version(String)
}
